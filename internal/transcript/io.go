package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/segmentio/encoding/json"
)

// Writer writes one transcript: the header, then entries. It is not safe
// for concurrent use; a recorder fed from several goroutines serialises
// its calls.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter writes a transcript to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// WriteHeader writes h as the first line, with this package's format and
// version and started as its start time.
func (w *Writer) WriteHeader(h Header, started time.Time) error {
	h.Format, h.Version = Format, Version
	h.Started = started.UTC().Format(time.RFC3339Nano)
	return w.write(h)
}

// WriteEntry writes one entry.
func (w *Writer) WriteEntry(e Entry) error { return w.write(e) }

// write encodes v as one line and flushes it, so a transcript cut short
// by a crash keeps everything before the crash.
func (w *Writer) write(v any) error {
	if w.err != nil {
		return w.err
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = w.w.Write(append(b, '\n'))
	}
	if err == nil {
		err = w.w.Flush()
	}
	if err != nil {
		w.err = fmt.Errorf("transcript: %w", err)
	}
	return w.err
}

// Err is the first write error, if any.
func (w *Writer) Err() error { return w.err }

// Transcript is a parsed transcript.
type Transcript struct {
	Header  Header
	Entries []Entry
}

// Read parses a transcript, refusing another format or version.
func Read(r io.Reader) (*Transcript, error) {
	br := bufio.NewReader(r)
	first, err := ReadLine(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", ErrFormat)
		}
		return nil, fmt.Errorf("transcript: %w", err)
	}
	h, err := CheckHeader(first)
	if err != nil {
		return nil, err
	}
	t := &Transcript{Header: h}
	for n := 2; ; n++ {
		line, err := ReadLine(br)
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("transcript: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("transcript: line %d: %w", n, err)
		}
		t.Entries = append(t.Entries, e)
	}
}

// ReadLine reads one line without its newline; a last line without one
// counts, and io.EOF is returned only when nothing was read.
func ReadLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadBytes('\n')
	if len(line) > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}
