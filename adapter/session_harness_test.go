package adapter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"acpkit.dev/adapter/internal/fakeagent"
)

func withDrain(d time.Duration) Option { return func(o *options) { o.drain = d } }

func withHandshakeFloor(d time.Duration) Option {
	return func(o *options) { o.handshakeFloor = d }
}

func withClock(now func() time.Time, wait func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.now, o.wait = now, wait }
}

// harness runs the coop fake agent through a real Adapter.
type harness struct {
	t   *testing.T
	a   *Adapter
	log *captureHandler
	dir string
	rec string
	// readTimeoutMS is used by params; tests shorten it where they wait
	// on purpose.
	readTimeoutMS int
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	l, h := newCapture()
	a, err := New(nil, append([]Option{WithLogger(l), withDrain(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &harness{t: t, a: a, log: h, dir: dir, rec: filepath.Join(dir, "wire.ndjson"), readTimeoutMS: 5000}
}

// params builds start parameters for the coop agent with args.
func (h *harness) params(args ...string) StartParams {
	return StartParams{
		WorkspacePath: h.dir,
		Agent: AgentConfig{
			Kind:          KindName,
			Command:       fakeagent.Command("coop", append(args, "record="+h.rec)...),
			ReadTimeoutMS: h.readTimeoutMS,
			StopGraceMS:   2000,
		},
	}
}

// start starts a session that must succeed; it is stopped at cleanup.
func (h *harness) start(args ...string) Session {
	h.t.Helper()
	return h.startWith(h.params(args...))
}

func (h *harness) startWith(p StartParams) Session {
	h.t.Helper()
	s, err := h.a.StartSession(context.Background(), p)
	if err != nil {
		h.t.Fatalf("StartSession: %v", err)
	}
	h.t.Cleanup(func() { h.stop(s) })
	return s
}

func (h *harness) stop(s Session) {
	if err := h.a.StopSession(context.Background(), s); err != nil {
		h.t.Errorf("StopSession: %v", err)
	}
	if s.s == nil {
		return
	}
	// No child left: the teardown reaps the runtime unless the caller's
	// deadline cut the reap wait short, and then the kill makes it quick.
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-s.s.proc.Exited():
	case <-t.C:
		h.t.Errorf("runtime %s still running after StopSession", s.AgentPID)
	}
}

// turn runs one turn and returns its result, error and events.
//
//lint:ignore ST1008 RunTurn's (result, error) pair stays together; the events trail it because most callers drop them.
func (h *harness) turn(s Session, prompt string) (TurnResult, error, *events) {
	return h.turnCtx(context.Background(), s, prompt)
}

// turnCtx is turn under the caller's context.
//
//lint:ignore ST1008 as turn.
func (h *harness) turnCtx(ctx context.Context, s Session, prompt string) (TurnResult, error, *events) {
	ev := &events{}
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: prompt, OnEvent: ev.on})
	return r, err, ev
}

// wire returns the lines the agent read, decoded loosely.
func (h *harness) wire() []string { return readLines(h.t, h.rec) }
