package check

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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
	// DirSpawn and DirExit are the agent process starting and ending, when
	// acpcheck learns them as facts (in client grading, from the scenario
	// agent itself); the transcript file keeps them as spawn and exit.
	DirSpawn Direction = "spawn"
	DirExit  Direction = "exit"
	// DirClientStdout and DirClientStderr are lines the graded client
	// wrote to its own stdout and stderr (client grading).
	DirClientStdout Direction = "client-stdout"
	DirClientStderr Direction = "client-stderr"
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
	// raw is the line's exact bytes (secrets masked) when Text is not
	// them: cut to length, or not UTF-8. The transcript file keeps them.
	raw []byte
	// event is a spawn's pid and argv or an exit's status and code.
	event *event
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
	t.mu.Lock()
	t.lines = append(t.lines, newLine(time.Since(t.start), dir, text))
	t.mu.Unlock()
}

// since is the time since the transcript's clock started.
func (t *transcript) since() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Since(t.start)
}

// started is when the transcript's clock started.
func (t *transcript) started() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.start
}

// restart empties the transcript and starts its clock again: the next
// check on a shared agent process records only its own lines.
func (t *transcript) restart() {
	t.mu.Lock()
	t.lines, t.start = nil, time.Now()
	t.mu.Unlock()
}

func (t *transcript) addLine(l Line) {
	t.mu.Lock()
	t.lines = append(t.lines, l)
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

// newLine makes a transcript line of text (already masked), cut to length
// for reports, its exact bytes kept for the transcript file.
func newLine(at time.Duration, dir Direction, text string) Line {
	l := Line{At: at, Dir: dir, Text: text}
	if len(text) > maxTranscriptText {
		l.Text = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(text[:maxTranscriptText], ""), len(text))
		l.raw = []byte(text)
	} else if !utf8.ValidString(text) {
		l.Text = strings.ToValidUTF8(text, "\uFFFD")
		l.raw = []byte(text)
	}
	return l
}

// Bytes is the line exactly as it passed (secrets masked).
func (l Line) Bytes() []byte {
	if l.raw != nil {
		return l.raw
	}
	return []byte(l.Text)
}
