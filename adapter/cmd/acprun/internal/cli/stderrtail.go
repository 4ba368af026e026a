package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/stderrlog"
)

// stderrTailLines bounds the runtime's stderr lines acprun keeps to show.
const stderrTailLines = 20

// stderrLine is one line the runtime wrote to its stderr, as the adapter
// read it (sanitised, secrets masked), with the time it was read.
type stderrLine struct {
	at   time.Time
	text string
}

// stderrTail keeps the last lines of the runtime's stderr. The adapter
// logs each line at Debug as it drains (LOG-21) and, after a failed start,
// re-logs them all at Warn (SS-2), stamped with the re-log time; acprun
// keeps the first and shows them as one block with the time they were
// written, instead of a dozen records.
type stderrTail struct {
	mu    sync.Mutex
	lines []stderrLine
	total int
}

func (t *stderrTail) add(at time.Time, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total++
	t.lines = append(t.lines, stderrLine{at: at, text: text})
	if len(t.lines) > stderrTailLines {
		t.lines = t.lines[len(t.lines)-stderrTailLines:]
	}
}

// texts returns the kept lines' text.
func (t *stderrTail) texts() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, len(t.lines))
	for i, l := range t.lines {
		out[i] = l.text
	}
	return out
}

// block renders the kept lines as one block headed by when they were
// written; "" when the runtime wrote nothing.
func (t *stderrTail) block() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	const clock = "15:04:05.000"
	first, last := t.lines[0].at, t.lines[len(t.lines)-1].at
	when := "at " + first.Format(clock)
	if !last.Equal(first) {
		when = "from " + first.Format(clock) + " to " + last.Format(clock)
	}
	count := fmt.Sprintf("%d %s", t.total, plural(t.total, "line", "lines"))
	if t.total > len(t.lines) {
		count = fmt.Sprintf("the last %d of %d lines", len(t.lines), t.total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "acprun: the runtime's stderr, %s, written %s:\n", count, when)
	for _, l := range t.lines {
		b.WriteString("  | " + l.text + "\n")
	}
	return b.String()
}

// tailHandler feeds the runtime's stderr records into a stderrTail and
// passes every other record to next. The stderr records reach next only
// as they drain and only when next wants Debug; the Warn re-log is dropped,
// the block replaces it.
type tailHandler struct {
	next slog.Handler
	tail *stderrTail
	// seen is told every record's message (the resume watch reads the
	// continuation records); nil for none.
	seen func(msg string)
	// mute, when it reports true, keeps records from next: after a stop a
	// person forced, what the adapter logs about it is noise. nil never
	// mutes.
	mute func() bool
}

func newTailHandler(next slog.Handler, tail *stderrTail, seen func(string)) *tailHandler {
	return &tailHandler{next: next, tail: tail, seen: seen}
}

// Enabled is true at every level: the stderr lines arrive at Debug whatever
// level next writes.
func (h *tailHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *tailHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.seen != nil {
		h.seen(r.Message)
	}
	if r.Message == stderrlog.LogMessage {
		if r.Level > slog.LevelDebug {
			return nil // the re-log of a failed start (SS-2)
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				h.tail.add(r.Time, a.Value.String())
				return false
			}
			return true
		})
	}
	if !h.next.Enabled(ctx, r.Level) || h.mute != nil && h.mute() {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *tailHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &tailHandler{next: h.next.WithAttrs(attrs), tail: h.tail, seen: h.seen, mute: h.mute}
}

func (h *tailHandler) WithGroup(name string) slog.Handler {
	return &tailHandler{next: h.next.WithGroup(name), tail: h.tail, seen: h.seen, mute: h.mute}
}

// writeFailureNotes writes, for a run that did not complete, the runtime's
// stderr block and the hints that match the failure, to w.
func writeFailureNotes(w io.Writer, t *stderrTail, command, failure string) {
	if b := t.block(); b != "" {
		_, _ = io.WriteString(w, b)
	}
	for _, h := range hintsFor(command, failure, t.texts()) {
		_, _ = fmt.Fprintf(w, "acprun: hint: %s\n", h)
	}
}
