package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpkit.dev/adapter"
)

// fakeTurn scripts one RunTurn of fakeRuntime.
type fakeTurn struct {
	events []adapter.Event
	result adapter.TurnResult
	err    error
	// untilCancel holds the turn until its context ends, then reports the
	// turn cancelled, as the adapter does after session/cancel (TU-7).
	untilCancel bool
	// untilStopped holds the turn, ignoring cancellation, until StopSession
	// ends the runtime, then reports the lost connection (DI-6).
	untilStopped bool
}

// fakeRuntime is a scripted Runtime that records how acprun drove it.
type fakeRuntime struct {
	startErr   error
	startBlock bool // StartSession waits for its context to end
	sess       Session
	turns      []fakeTurn

	// wire is tapped and logs are logged (at Warn) during StartSession;
	// stopLogs during StopSession.
	wire     []adapter.WireEvent
	logs     []string
	stopLogs []string
	log      *slog.Logger
	tap      func(adapter.WireEvent)
	hook     adapter.PermissionHook
	// contain is the containment acprun built the adapter with.
	contain adapter.Containment

	turnBegan chan int      // receives the turn number as each turn begins
	stopped   chan struct{} // closed when StopSession is called

	mu          sync.Mutex
	start       adapter.StartParams
	startCtx    context.Context
	startEnded  bool // the start's context had ended during a turn
	prompts     []string
	stopCalls   int
	stopCtxDone bool // StopSession's context was already done
	concurrent  bool // StopSession ran while a turn was in flight
	inTurn      bool
}

func newFake(turns ...fakeTurn) *fakeRuntime {
	return &fakeRuntime{
		sess:      Session{ID: "sess-1", AgentPID: "4242"},
		turns:     turns,
		turnBegan: make(chan int, 16),
		stopped:   make(chan struct{}),
	}
}

func (f *fakeRuntime) StartSession(ctx context.Context, p adapter.StartParams) (Session, error) {
	f.mu.Lock()
	f.start, f.startCtx = p, ctx
	f.mu.Unlock()
	for _, e := range f.wire {
		f.tap(e)
	}
	for _, m := range f.logs {
		f.log.Warn(m)
	}
	if f.startBlock {
		<-ctx.Done()
		return Session{}, &adapter.Error{Kind: adapter.KindTurnCancelled, Message: "session start was cancelled", Err: ctx.Err()}
	}
	if f.startErr != nil {
		return Session{}, f.startErr
	}
	return f.sess, nil
}

func (f *fakeRuntime) RunTurn(ctx context.Context, s Session, p adapter.TurnParams) (adapter.TurnResult, error) {
	f.mu.Lock()
	n := len(f.prompts)
	f.prompts = append(f.prompts, p.Prompt)
	f.inTurn = true
	f.startEnded = f.startEnded || f.startCtx.Err() != nil
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inTurn = false
		f.mu.Unlock()
	}()
	f.turnBegan <- n + 1
	t := f.turns[n]
	for _, e := range t.events {
		if p.OnEvent != nil {
			p.OnEvent(e)
		}
	}
	switch {
	case t.untilCancel:
		<-ctx.Done()
		p.OnEvent(adapter.Event{Type: adapter.EventTurnCancelled, Message: "turn cancelled", SessionID: s.ID, AgentPID: s.AgentPID})
		res := adapter.TurnResult{SessionID: s.ID, Outcome: adapter.EventTurnCancelled, Kind: adapter.KindTurnCancelled, Message: "turn cancelled"}
		return res, &adapter.Error{Kind: adapter.KindTurnCancelled, Message: "turn cancelled"}
	case t.untilStopped:
		<-f.stopped
		const msg = "the agent's connection ended before a response arrived"
		p.OnEvent(adapter.Event{Type: adapter.EventTurnFailed, Message: msg, SessionID: s.ID, AgentPID: s.AgentPID})
		res := adapter.TurnResult{SessionID: s.ID, Outcome: adapter.EventTurnFailed, Kind: adapter.KindPortExit, Message: msg}
		return res, &adapter.Error{Kind: adapter.KindPortExit, Message: msg}
	}
	return t.result, t.err
}

func (f *fakeRuntime) StopSession(ctx context.Context, s Session) error {
	f.mu.Lock()
	f.stopCalls++
	f.stopCtxDone = ctx.Err() != nil
	f.concurrent = f.inTurn
	f.mu.Unlock()
	for _, m := range f.stopLogs {
		f.log.Warn(m)
	}
	close(f.stopped)
	return nil
}

// completed scripts a turn that completes after the given events.
func completed(events ...adapter.Event) fakeTurn {
	return fakeTurn{events: events, result: adapter.TurnResult{SessionID: "sess-1", Outcome: adapter.EventTurnCompleted}}
}

// measured scripts a completed turn whose session reported usage.
func measured() fakeTurn {
	t := completed()
	t.result.UsageMeasured = true
	t.result.Usage = adapter.Usage{Input: 120, Output: 34, Total: 154, CacheRead: 7}
	t.result.Model = "gemini-x"
	return t
}

// failedTurn scripts a turn that ends with outcome and kind.
func failedTurn(outcome adapter.EventType, kind adapter.Kind, msg string) fakeTurn {
	return fakeTurn{
		events: []adapter.Event{{Type: outcome, Message: msg}},
		result: adapter.TurnResult{SessionID: "sess-1", Outcome: outcome, Kind: kind, Message: msg},
		err:    &adapter.Error{Kind: kind, Message: msg},
	}
}

// epoch is the fixed clock of these tests, so every duration shown is 0ms.
var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// harness runs Main against a fake and captures its output.
type harness struct {
	rt      *fakeRuntime
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	signals chan os.Signal
	agent   func(ctx context.Context) (string, error)
	// tty is the controlling terminal --permissions ask opens; nil: none.
	tty func() (io.ReadWriteCloser, error)
}

func newHarness(rt *fakeRuntime) *harness {
	return &harness{
		rt:      rt,
		signals: make(chan os.Signal, 4),
		agent:   func(context.Context) (string, error) { return "/opt/acpkit/acprun", nil },
	}
}

func (h *harness) env(args ...string) Env {
	return Env{
		Args:    args,
		Stdout:  &h.stdout,
		Stderr:  &lockedWriter{w: &h.stderr},
		Signals: h.signals,
		Getwd:   func() (string, error) { return "/work/here", nil },
		Now:     func() time.Time { return epoch },
		NewRuntime: func(o RuntimeOptions) (Runtime, error) {
			if h.rt == nil {
				return nil, errors.New("no runtime")
			}
			h.rt.log, h.rt.tap, h.rt.hook, h.rt.contain = o.Logger, o.Tap, o.PermissionHook, o.Containment
			return h.rt, nil
		},
		OpenTTY:        h.tty,
		ReferenceAgent: h.agent,
	}
}

func (h *harness) run(args ...string) int { return Main(h.env(args...)) }

// lockedWriter serialises writes from the signal watcher and the run.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
