package adapter

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/adapter/internal/hostile"
	referenceagent "acpkit.dev/conformance/refagent"
	"acpkit.dev/internal/realruntime"
)

// TestMain runs a fake agent scenario when the binary was started as one,
// the reference agent when its first argument is "refagent" (Example's
// runtime, as in `acprun refagent`), a CPU hog when it is cpuHogArg, and
// otherwise the tests, checking that none leaves a goroutine behind.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == cpuHogArg {
		cpuHog()
	}
	realruntime.TapMain()
	if len(os.Args) > 1 && os.Args[1] == "refagent" {
		os.Exit(referenceagent.Main(os.Args[2:]))
	}
	fakeagent.Main(map[string]fakeagent.Scenario{"coop": coopAgent, "hello": helloAgent, "hostile": hostile.Scenario})
	// The cleanup must exit with the code itself: one that returns leaves
	// TestMain returning, and a leak found would pass unseen.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		cleanupRefagent()
		os.Exit(code)
	}))
}

// record is one captured log record.
type record struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// captureHandler keeps every record, with attributes rendered as strings.
type captureHandler struct {
	mu      *sync.Mutex
	recs    *[]record
	waiters *[]waiter
	attrs   []slog.Attr
}

type waiter struct {
	msg, line string
	ch        chan struct{}
}

func newCapture() (*slog.Logger, *captureHandler) {
	h := &captureHandler{mu: &sync.Mutex{}, recs: &[]record{}, waiters: &[]waiter{}}
	return slog.New(h), h
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := record{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	ws := (*h.waiters)[:0]
	for _, w := range *h.waiters {
		if w.msg == rec.Message && (w.line == "" || w.line == rec.Attrs["line"]) {
			close(w.ch)
			continue
		}
		ws = append(ws, w)
	}
	*h.waiters = ws
	h.mu.Unlock()
	return nil
}

// waitFor returns a channel closed when a record with message msg (and,
// when line is set, that line attribute) is logged from now on.
func (h *captureHandler) waitFor(msg, line string) <-chan struct{} {
	ch := make(chan struct{})
	h.mu.Lock()
	*h.waiters = append(*h.waiters, waiter{msg: msg, line: line, ch: ch})
	h.mu.Unlock()
	return ch
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{mu: h.mu, recs: h.recs, waiters: h.waiters, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// find returns the records with message msg.
func (h *captureHandler) find(msg string) []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []record
	for _, r := range *h.recs {
		if r.Message == msg {
			out = append(out, r)
		}
	}
	return out
}

func (h *captureHandler) all() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// events collects a turn's events.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) on(ev Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.evs)
}

func (e *events) messages(t EventType) []string {
	var out []string
	for _, ev := range e.list() {
		if ev.Type == t {
			out = append(out, ev.Message)
		}
	}
	return out
}

// texts are the non-empty notification messages.
func (e *events) texts() []string {
	var out []string
	for _, m := range e.messages(EventNotification) {
		if m != "" {
			out = append(out, m)
		}
	}
	return out
}

// lastText is the last non-empty notification message starting with
// prefix, or "" when there is none.
func (e *events) lastText(prefix string) string {
	var last string
	for _, m := range e.texts() {
		if strings.HasPrefix(m, prefix) {
			last = m
		}
	}
	return last
}

func (e *events) types() []EventType {
	var out []EventType
	for _, ev := range e.list() {
		out = append(out, ev.Type)
	}
	return out
}

// readLines reads a transcript file the fake agent appended to.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
