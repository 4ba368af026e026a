package measure

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// The bounds of a drain that reads JSON Lines a runtime appends to.
const (
	// DrainBound is what one drain reads, over every file it reads: the
	// rest waits for the next drain, so a large backlog is read in steps,
	// never skipped.
	DrainBound = 64 << 20
	// LineBound skips a longer line whole. The records that count are a
	// model's reply (bounded by its output limit) or a usage event, far
	// below it; the lines above it are tool output and request copies.
	LineBound = 16 << 20
)

// Lines reads one file that a runtime appends JSON Lines to, from where
// its last read stopped. Only whole lines (ending in a newline) are handed
// on, so a line the runtime is still writing is read again, whole, next
// time. A file that shrank or was replaced by another is read again from
// its start: a source's records must make reading a line twice harmless.
// The zero value reads from the start.
type Lines struct {
	pos  int64
	file os.FileInfo
	// skipping: the bytes at pos continue a line over the bound.
	skipping bool
	// bound is the line bound, LineBound when 0; tests lower it.
	bound int
}

// Pos is the offset after the last whole line read.
func (l *Lines) Pos() int64 { return l.pos }

// ReadTail reads what path holds now, as a source's Open does: the last
// DrainBound bytes of a larger file (its first, partial line is not a
// record), then everything up to the end, whole lines or not, is left
// behind, so what the runtime wrote before is never read again.
func (l *Lines) ReadTail(path string, each func(line []byte)) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	l.pos = max(fi.Size()-DrainBound, 0)
	budget := int64(DrainBound)
	l.Read(path, &budget, each)
	if l.file != nil {
		l.pos, l.skipping = l.file.Size(), false
	}
}

// Read hands each whole line after the saved position to each, without
// its line end, reading at most *budget bytes and taking what it read off
// *budget. The line passed to each is only valid during the call. A file
// that does not exist (yet) reads as empty.
func (l *Lines) Read(path string, budget *int64, each func(line []byte)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if l.file != nil && (!os.SameFile(l.file, fi) || fi.Size() < l.pos) {
		l.pos, l.skipping = 0, false // rotated or truncated: from the start
	}
	l.file = fi
	if *budget <= 0 || fi.Size() <= l.pos {
		return
	}
	if _, err := f.Seek(l.pos, io.SeekStart); err != nil {
		return
	}
	n := min(*budget, fi.Size()-l.pos)
	*budget -= n
	r := bufio.NewReaderSize(io.LimitReader(f, n), 64<<10)
	bound := LineBound
	if l.bound > 0 {
		bound = l.bound
	}
	var line []byte // the current line so far, not yet past pos
	for {
		chunk, err := r.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		switch {
		case l.skipping:
			l.pos += int64(len(chunk))
			l.skipping = err != nil
		case len(line)+len(chunk) > bound+1:
			// Over the bound: skipped whole, what was read of it too.
			l.pos += int64(len(line) + len(chunk))
			line = line[:0]
			l.skipping = err != nil
		default:
			line = append(line, chunk...)
			if err != nil {
				break // a partial line: more of it, or the next read
			}
			l.pos += int64(len(line))
			each(bytes.TrimRight(line, "\r\n"))
			line = line[:0]
		}
		if err != nil && !full {
			return // the end of what is written, or of the budget
		}
	}
}
