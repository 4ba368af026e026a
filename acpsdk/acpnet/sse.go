package acpnet

import (
	"bytes"
	"errors"
	"fmt"
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

// lineOverhead is what a line may hold beyond an event's data: a byte
// order mark and "data: ".
const lineOverhead = 9

// sseParser parses an event stream fed to it in chunks, as the TypeScript
// SDK's reader does (TR-6): lines end in LF, CRLF or a lone CR; a UTF-8
// byte order mark at the start of a line is dropped; "data:" fields, with
// or without one space after the colon, make an event's data, several
// joined by "\n"; every other field and ":" comments are ignored; a blank
// line ends the event, and so does the end of the stream. A line or an
// event's data longer than max bytes is ErrMessageTooLarge.
type sseParser struct {
	max int
	// partial is a line begun in an earlier chunk.
	partial []byte
	// skipLF: the last line ended with CR, so a LF right after belongs to it.
	skipLF  bool
	data    []byte
	hasData bool
}

// feed parses chunk, calling emit with each complete event's data (valid
// only during the call); an error from emit stops it.
func (s *sseParser) feed(chunk []byte, emit func([]byte) error) error {
	for len(chunk) > 0 {
		if s.skipLF {
			s.skipLF = false
			if chunk[0] == '\n' {
				chunk = chunk[1:]
				continue
			}
		}
		i := lineEnd(chunk)
		if i < 0 {
			if len(s.partial)+len(chunk) > s.max+lineOverhead {
				return s.tooLong()
			}
			s.partial = append(s.partial, chunk...)
			return nil
		}
		line := chunk[:i]
		s.skipLF = chunk[i] == '\r'
		chunk = chunk[i+1:]
		if len(s.partial)+len(line) > s.max+lineOverhead {
			return s.tooLong()
		}
		if len(s.partial) > 0 {
			line = append(s.partial, line...)
			s.partial = s.partial[:0]
		}
		if err := s.line(line, emit); err != nil {
			return err
		}
	}
	return nil
}

// end ends the stream: a last line without its end counts, and a last
// event without its blank line.
func (s *sseParser) end(emit func([]byte) error) error {
	if len(s.partial) > 0 {
		line := s.partial
		s.partial = nil
		if err := s.line(line, emit); err != nil {
			return err
		}
	}
	if s.hasData {
		s.hasData = false
		return emit(s.data)
	}
	return nil
}

// line takes one line of the stream.
func (s *sseParser) line(line []byte, emit func([]byte) error) error {
	line = bytes.TrimPrefix(line, utf8BOM)
	if len(line) == 0 {
		if !s.hasData {
			return nil
		}
		s.hasData = false
		err := emit(s.data)
		s.data = s.data[:0]
		return err
	}
	value, ok := bytes.CutPrefix(line, sseDataPrefix[:5])
	if !ok {
		return nil // another field, or a comment
	}
	value = bytes.TrimPrefix(value, sseDataPrefix[5:])
	extra := len(value)
	if s.hasData {
		extra++
	}
	if len(s.data)+extra > s.max {
		return fmt.Errorf("%w: an event's data exceeds %d bytes", ErrMessageTooLarge, s.max)
	}
	if s.hasData {
		s.data = append(s.data, '\n')
	}
	s.data = append(s.data, value...)
	s.hasData = true
	return nil
}

func (s *sseParser) tooLong() error {
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
