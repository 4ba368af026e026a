package acpsdk

import (
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default bound on one inbound line (SDK-9).
const DefaultMaxLineBytes = 10 << 20

// readBufferSize is the most one read of the stream asks for: how far the
// reader may run ahead of a slow consumer beside what the inbound queue
// holds.
const readBufferSize = 32 << 10

// lineSlabSize is the size of the blocks the stream is read into: lines
// are handed out of them as they are (one allocation serves many lines and
// no line is copied), and a line a block cuts is moved to the next one. 64
// KiB rather than 32: what a block leaves unused is about half a line, and
// with decoded strings sharing the line (nothing else allocated per byte)
// that waste counts (docs/DESIGN.md, "Measurements behind the bounds", has
// the figures).
const lineSlabSize = 64 << 10

// maxEmptyReads bounds the reads in a row that return neither bytes nor an
// error (io.Reader discourages them), as bufio does.
const maxEmptyReads = 100

// lineReader splits an NDJSON stream into lines. It reads the stream
// straight into blocks and hands each line out of its block, with no copy
// (a read buffer would cost one per line). A line longer than max is
// consumed and discarded chunk by chunk, so it never costs more than max
// bytes of memory, and is reported to the caller instead of ending the
// stream.
type lineReader struct {
	r   io.Reader
	max int
	// buf is the current block: the lines handed out, then the bytes read
	// and not yet handed out, buf[start:end], of which buf[start:scan]
	// hold no newline.
	buf              []byte
	start, scan, end int
	err              error // the read error met, once the bytes before it are used
	empty            int   // reads in a row that returned nothing
	over             bool  // discarding an oversize line
	overSize         int64 // its bytes discarded so far
	overCR           bool  // the last of them was '\r'
	// beforeRead, if set, runs before each read of the stream, which may
	// wait: the connection wakes its dispatcher there (see inbox.flush).
	beforeRead func()
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, max: max}
}

// next returns the next non-blank line without its line terminator ("\n" or
// "\r\n"). Each returned line is the caller's to keep: it is never written
// again, and its capacity ends with it, so appending to it cannot reach the
// next line.
//
// The trusted decoders rely on this: the strings they decode from a line
// share its bytes instead of copying them (jsonx.String), which is sound
// only because nothing writes those bytes afterwards. A block is written
// only past the lines handed out of it, and the connection passes lines on
// read-only (Request.Params and Options.Tap say so to handlers).
//
// When a line exceeds the bound, next returns a nil line and an
// *OversizeError; the caller reports it and calls next again. A final line
// without a newline before EOF is returned as a line; the EOF follows on the
// next call. Any other error ends the stream.
func (r *lineReader) next() ([]byte, error) {
	for {
		if k := bytes.IndexByte(r.buf[r.scan:r.end], '\n'); k >= 0 {
			nl := r.scan + k
			line := r.buf[r.start:nl:nl]
			r.start, r.scan = nl+1, nl+1
			if len(r.buf) > lineSlabSize {
				// A block grown for a long line: what follows goes to a
				// block of the usual size, so that a small line kept
				// later does not keep the long one's memory alive.
				r.grow()
			}
			if line, err := r.take(line); err != nil || line != nil {
				return line, err
			}
			continue
		}
		r.scan = r.end
		if r.err != nil {
			return r.last()
		}
		if pending := r.end - r.start; r.over || pending > r.max+1 {
			// Too long already (a "\r" before the "\n" belongs to the
			// terminator, hence the one byte more): count what was read
			// of it and read the rest into the same room.
			if pending > 0 {
				r.overSize += int64(pending)
				r.overCR = r.buf[r.end-1] == '\r'
			}
			r.over = true
			r.end, r.scan = r.start, r.start
		}
		if r.end == len(r.buf) || r.over && len(r.buf)-r.end < readBufferSize {
			r.grow()
		}
		r.read()
	}
}

// take finishes a complete line: the line, nil for a blank line to skip, or
// an *OversizeError.
func (r *lineReader) take(line []byte) ([]byte, error) {
	if r.over {
		size, cr := r.overSize+int64(len(line)), r.overCR
		if len(line) > 0 {
			cr = line[len(line)-1] == '\r'
		}
		if cr {
			size--
		}
		r.over, r.overSize = false, 0
		return nil, &OversizeError{Size: size, Limit: r.max}
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[: len(line)-1 : len(line)-1]
	}
	if len(line) > r.max {
		return nil, &OversizeError{Size: int64(len(line)), Limit: r.max}
	}
	if blank(line) {
		return nil, nil
	}
	return line, nil
}

// last deals with the stream's end once no complete line is left: a final
// line without a newline before EOF is delivered; after any other error a
// partial line is dropped (a broken stream's is not a message).
func (r *lineReader) last() ([]byte, error) {
	pending := r.start < r.end || r.over
	if !pending || !errors.Is(r.err, io.EOF) {
		r.start, r.scan, r.over = r.end, r.end, false
		return nil, r.err
	}
	line := r.buf[r.start:r.end:r.end]
	r.start = r.end
	line, err := r.take(line)
	if err != nil || line != nil {
		return line, err
	}
	return nil, r.err
}

// grow moves the bytes not yet handed out to a new block, so that the
// lines handed out of the old one stay as they are. A line longer than a
// block gets a block of its own, twice as long as what was read of it.
func (r *lineReader) grow() {
	pending := r.buf[r.start:r.end]
	size := lineSlabSize
	if 2*len(pending) > size {
		size = 2 * len(pending)
	}
	buf := make([]byte, size)
	n := copy(buf, pending)
	r.buf, r.start, r.scan, r.end = buf, 0, r.scan-r.start, n
}

// read reads what the stream has, at most readBufferSize bytes, into the
// block's free room.
func (r *lineReader) read() {
	if r.beforeRead != nil {
		r.beforeRead()
	}
	n, err := r.r.Read(r.buf[r.end:min(len(r.buf), r.end+readBufferSize)])
	r.end += n
	switch {
	case err != nil:
		r.err = err
	case n > 0:
		r.empty = 0
	default:
		if r.empty++; r.empty >= maxEmptyReads {
			r.err = io.ErrNoProgress
		}
	}
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
