package check

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Direction says where a transcript line came from.
type Direction string

const (
	// DirSend is a line acpcheck wrote to the agent's stdin.
	DirSend Direction = "send"
	// DirRecv is a line read from the agent's stdout.
	DirRecv Direction = "recv"
	// DirStderr is a line the agent wrote to stderr.
	DirStderr Direction = "stderr"
	// DirNote is something acpcheck did or saw that is not a line: a signal
	// sent, stdin closed, the process exiting.
	DirNote Direction = "note"
)

// maxTranscriptText caps each recorded line so a transcript of an agent
// that writes megabyte lines stays readable.
const maxTranscriptText = 2048

// Line is one transcript entry.
type Line struct {
	// At is the time since the agent was launched (in JSON, a Go duration
	// string).
	At   time.Duration `json:"at"`
	Dir  Direction     `json:"dir"`
	Text string        `json:"text"`
}

// transcript collects lines from several goroutines.
type transcript struct {
	start time.Time
	mask  *masker
	mu    sync.Mutex
	lines []Line
}

func newTranscript(mask *masker) *transcript { return &transcript{start: time.Now(), mask: mask} }

// add records one line, secrets masked before it is cut to length (so no
// part of one survives the cut).
func (t *transcript) add(dir Direction, b []byte) {
	text := t.mask.text(string(b))
	if len(text) > maxTranscriptText {
		text = fmt.Sprintf("%s… (%d bytes in all)", text[:maxTranscriptText], len(b))
	}
	t.mu.Lock()
	t.lines = append(t.lines, Line{At: time.Since(t.start), Dir: dir, Text: text})
	t.mu.Unlock()
}

func (t *transcript) notef(format string, args ...any) {
	t.add(DirNote, fmt.Appendf(nil, format, args...))
}

func (t *transcript) snapshot() []Line {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Line, len(t.lines))
	copy(out, t.lines)
	return out
}

// WriteTranscript prints lines in a fixed human-readable form, one per line:
// elapsed milliseconds, direction, text.
func WriteTranscript(w io.Writer, lines []Line) error {
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "  %8.1fms %-6s %s\n", float64(l.At.Microseconds())/1000, l.Dir, l.Text); err != nil {
			return err
		}
	}
	return nil
}
