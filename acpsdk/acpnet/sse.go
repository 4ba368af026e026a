package acpnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Server-sent events as ACP's Streamable HTTP uses them (TR-6): each
// message is one event, "data: <one-line JSON>\n\n", with no id, event or
// retry field; a ":" comment keeps an idle stream alive.

var (
	sseDataPrefix = []byte("data: ")
	sseEventEnd   = []byte("\n\n")
	sseKeepAlive  = []byte(":\n\n")
	utf8BOM       = []byte("\xef\xbb\xbf")
)

// ErrMessageTooLarge is returned when an inbound message (an SSE event, a
// WebSocket frame, an HTTP body) is longer than the transport's bound.
var ErrMessageTooLarge = errors.New("acpnet: message too large")

// sseReadBufferSize is the reader's buffer: events up to this size are
// returned without being copied twice.
const sseReadBufferSize = 64 << 10

// sseReader parses an event stream, as the TypeScript SDK's reader does:
// lines end in LF, CRLF or a lone CR; a UTF-8 byte order mark at the start
// of a line is dropped; "data:" fields, with or without one space after
// the colon, make an event's data, several joined by "\n"; every other
// field and ":" comments are ignored; a blank line ends the event, and so
// does the end of the stream. A line or an event's data longer than max
// bytes is ErrMessageTooLarge.
type sseReader struct {
	r    io.Reader
	max  int
	buf  []byte
	head int // buf[head:tail] is read but not yet parsed
	tail int
	eof  error
	// skipLF: the last line ended with CR, so a LF right after belongs to it.
	skipLF bool
	// long accumulates a line that does not fit in buf.
	long    []byte
	data    []byte
	hasData bool
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: r, max: max, buf: make([]byte, sseReadBufferSize)}
}

// next returns the data of the next event that has any. The slice is
// valid until the following call. At the end of the stream it returns
// io.EOF (after a last event not followed by a blank line).
func (s *sseReader) next() ([]byte, error) {
	s.data, s.hasData = s.data[:0], false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && s.hasData {
				s.hasData = false
				return s.data, nil
			}
			return nil, err
		}
		line = bytes.TrimPrefix(line, utf8BOM)
		if len(line) == 0 {
			if s.hasData {
				return s.data, nil
			}
			continue
		}
		value, ok := bytes.CutPrefix(line, sseDataPrefix[:5])
		if !ok {
			continue // another field, or a comment
		}
		value = bytes.TrimPrefix(value, sseDataPrefix[5:])
		extra := len(value)
		if s.hasData {
			extra++
		}
		if len(s.data)+extra > s.max {
			return nil, fmt.Errorf("%w: an event's data exceeds %d bytes", ErrMessageTooLarge, s.max)
		}
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	}
}

// lineOverhead is what a line may hold beyond an event's data: a byte
// order mark and "data: ".
const lineOverhead = 9

// line returns the next line without its end. At the end of the stream a
// last unterminated line is returned before io.EOF.
func (s *sseReader) line() ([]byte, error) {
	s.long = s.long[:0]
	for {
		if s.skipLF && s.head < s.tail {
			if s.buf[s.head] == '\n' {
				s.head++
			}
			s.skipLF = false
		}
		chunk := s.buf[s.head:s.tail]
		if i := lineEnd(chunk); i >= 0 {
			s.head += i + 1
			s.skipLF = chunk[i] == '\r'
			line := chunk[:i]
			if len(s.long) > 0 {
				if len(s.long)+len(line) > s.max+lineOverhead {
					return nil, s.tooLong()
				}
				line = append(s.long, line...)
			}
			return line, nil
		}
		if len(s.long)+len(chunk) > s.max+lineOverhead {
			return nil, s.tooLong()
		}
		if s.eof != nil {
			s.head = s.tail
			if (len(chunk) > 0 || len(s.long) > 0) && errors.Is(s.eof, io.EOF) {
				// A broken stream's partial line is not a line.
				return append(s.long, chunk...), nil
			}
			return nil, s.eof
		}
		if s.head > 0 {
			if len(chunk) > len(s.buf)/2 {
				// Mostly a partial line: set it aside and refill whole.
				s.long = append(s.long, chunk...)
				s.head, s.tail = 0, 0
			} else {
				s.tail = copy(s.buf, chunk)
				s.head = 0
			}
		} else if s.tail == len(s.buf) {
			s.long = append(s.long, chunk...)
			s.head, s.tail = 0, 0
		}
		n, err := s.r.Read(s.buf[s.tail:])
		s.tail += n
		if err != nil {
			s.eof = err
		}
	}
}

func (s *sseReader) tooLong() error {
	return fmt.Errorf("%w: an event stream line exceeds %d bytes", ErrMessageTooLarge, s.max+lineOverhead)
}

// lineEnd returns the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	if lf < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if cr := bytes.IndexByte(b[:lf], '\r'); cr >= 0 {
		return cr
	}
	return lf
}
