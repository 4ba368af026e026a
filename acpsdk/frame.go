package acpsdk

import (
	"bufio"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default bound on one inbound line (SDK-9).
const DefaultMaxLineBytes = 10 << 20

// readBufferSize is the framer's read buffer: big enough that the common
// line (a few KiB) is returned by a single ReadSlice without copying twice,
// and small, since the reader may run that far ahead of a slow handler
// beside what the inbound queue holds.
const readBufferSize = 32 << 10

// lineSlabSize is the size of the blocks lines are copied into: one
// allocation serves many small lines. A line longer than a quarter of it
// gets an allocation of its own, so at most a quarter of a block is left
// unused when a line does not fit. 64 KiB rather than 32: what a block
// leaves unused is about half a line, and with decoded strings sharing the
// line (nothing else allocated per byte) that waste counts (docs/DESIGN.md,
// "Measurements behind the bounds", has the figures).
const lineSlabSize = 64 << 10

// lineReader splits an NDJSON stream into lines. A line longer than max is
// consumed and discarded chunk by chunk, so it never costs more than max
// bytes of memory, and is reported to the caller instead of ending the
// stream.
type lineReader struct {
	br   *bufio.Reader
	max  int
	slab []byte // the free rest of the current block
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next non-blank line without its line terminator ("\n" or
// "\r\n"). Each returned line is the caller's to keep: it is never written
// again, and its capacity ends with it, so appending to it cannot reach the
// next line.
//
// The trusted decoders rely on this: the strings they decode from a line
// share its bytes instead of copying them (jsonx.String), which is sound
// only because nothing writes those bytes afterwards. keep hands out each
// part of a block once and moves past it, a long line is a fresh
// allocation owned by its caller alone, and the connection passes lines on
// read-only (Request.Params and Options.Tap say so to handlers).
//
// When a line exceeds the bound, next returns a nil line and an
// *OversizeError; the caller reports it and calls next again. A final line
// without a newline before EOF is returned as a line; the EOF follows on the
// next call. Any other error ends the stream.
func (r *lineReader) next() ([]byte, error) {
	for {
		var (
			line []byte
			size int64 // bytes of the line so far, "\n" excluded
			over bool
			cr   bool // the last byte read was '\r'
		)
		// A "\r" before the "\n" is part of the terminator, not of the
		// line, so the bound allows one more byte until the end is seen.
		limit := int64(r.max) + 1
		for {
			chunk, err := r.br.ReadSlice('\n')
			body := chunk
			if err == nil {
				body = chunk[:len(chunk)-1]
			}
			if len(body) > 0 {
				cr = body[len(body)-1] == '\r'
			}
			size += int64(len(body))
			switch {
			case over:
			case size > limit:
				// Drop what was kept; the rest of the line is counted, not stored.
				over, line = true, nil
			case line == nil && err == nil:
				// Common case: the whole line is in the buffer; one exact copy.
				line = r.keep(body)
			default:
				line = append(line, body...)
			}
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if size == 0 || !errors.Is(err, io.EOF) {
				// Nothing pending, or the stream failed mid-line: a
				// partial line from a broken stream is not a message.
				return nil, err
			}
			break // EOF after an unterminated final line: deliver it.
		}
		if cr {
			size--
			if !over {
				line = line[:len(line)-1]
			}
		}
		if over || size > int64(r.max) {
			return nil, &OversizeError{Size: size, Limit: r.max}
		}
		if !blank(line) {
			return line, nil
		}
	}
}

// keep copies a line out of the read buffer, into the current block when
// it fits. A kept line keeps its whole block alive, which is the price of
// one allocation per block instead of one per line.
func (r *lineReader) keep(body []byte) []byte {
	n := len(body)
	if n > lineSlabSize/4 {
		return append(make([]byte, 0, n), body...)
	}
	if len(r.slab) < n {
		r.slab = make([]byte, lineSlabSize)
	}
	line := r.slab[:n:n]
	copy(line, body)
	r.slab = r.slab[n:]
	return line
}

// blank reports whether a line holds only JSON whitespace; such lines are
// skipped silently rather than answered as parse errors.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
