package adapter

import (
	"context"
	"strings"
	"testing"
	"time"

	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/adapter/internal/hostile"
)

// hostileSecret is the credential the hostile runtime repeats on its
// stderr. It has no 'x' (the filler before a line cut) and is long enough
// that any secretProbe bytes of it are its own.
const hostileSecret = "Qk7vR2mZp9LwT4nB8cYh3JsD6fGa5uE1"

// secretProbe is the length of the pieces of the secret looked for: no
// piece of it this long may appear in any event, record or error.
const secretProbe = 6

// leaksSecret reports the first piece of the secret found in text.
func leaksSecret(text string) (string, bool) {
	for i := 0; i+secretProbe <= len(hostileSecret); i++ {
		if piece := hostileSecret[i : i+secretProbe]; strings.Contains(text, piece) {
			return piece, true
		}
	}
	return "", false
}

// hostileRig runs the hostile runtime (internal/hostile) through a real
// Adapter: in memory when mem is set (each launch a goroutine over pipes,
// delays free inside a synctest bubble), else as a child process.
type hostileRig struct {
	t   testing.TB
	a   *Adapter
	mem *hostile.Launcher
	log *captureHandler
	dir string
	// plan is the plan the property suite runs, for its checks.
	plan hostile.Plan
}

// newHostileRig builds the rig; plan, when set, replaces the generated
// plan of an in-memory runtime. The environment gets the secret (so the
// test must not be parallel).
func newHostileRig(t *testing.T, mem bool, plan func(uint64, hostile.Size) hostile.Plan, opts ...Option) *hostileRig {
	t.Helper()
	t.Setenv(hostile.SecretEnv, hostileSecret)
	r := &hostileRig{t: t, dir: t.TempDir()}
	l, h := newCapture()
	r.log = h
	opts = append([]Option{WithLogger(l), withDrain(time.Second)}, opts...)
	if mem {
		r.mem = &hostile.Launcher{Secret: hostileSecret, Plan: plan}
		opts = append(opts, withLauncher(r.mem))
	}
	a, err := New(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	return r
}

// params are the start parameters of the runtime for seed and size; extra
// arguments follow (record=PATH for a child's record).
func (r *hostileRig) params(seed uint64, size hostile.Size, readTimeout time.Duration, extra ...string) StartParams {
	return StartParams{
		WorkspacePath: r.dir,
		Agent: AgentConfig{
			Kind:          KindName,
			Command:       fakeagent.Command("hostile", append(hostile.Args(seed, size), extra...)...),
			ReadTimeoutMS: int(readTimeout / time.Millisecond),
			StopGraceMS:   2000,
		},
	}
}

// start starts a session that must succeed.
func (r *hostileRig) start(seed uint64, size hostile.Size, readTimeout time.Duration) Session {
	r.t.Helper()
	s, err := r.a.StartSession(context.Background(), r.params(seed, size, readTimeout))
	if err != nil {
		r.t.Fatalf("StartSession: %v", err)
	}
	r.t.Cleanup(func() { _ = r.a.StopSession(context.Background(), s) })
	return s
}

// turn runs turn i of the plan and returns its result, error and events.
//
//lint:ignore ST1008 as harness.turn.
func (r *hostileRig) turn(ctx context.Context, s Session, i int) (TurnResult, error, []Event) {
	ev := &events{}
	res, err := r.a.RunTurn(ctx, s, TurnParams{Prompt: hostile.Prompt(i), OnEvent: ev.on})
	return res, err, ev.list()
}

// record is what the in-memory runtime of s recorded.
func (r *hostileRig) record(s Session) hostile.Record { return r.mem.Record(s.AgentPID) }

// defaultTestReadTimeout is the read timeout of the hostile sessions.
const defaultTestReadTimeout = 5 * time.Second

// endTurn is the ending of a plain turn.
var endTurn = hostile.Ending{Kind: hostile.EndAnswer, StopReason: "end_turn"}

// planOf returns a plan function for a hand-written plan.
func planOf(turns ...hostile.Turn) func(uint64, hostile.Size) hostile.Plan {
	return func(seed uint64, _ hostile.Size) hostile.Plan { return hostile.Plan{Seed: seed, Turns: turns} }
}

// repeatStep is n copies of s.
func repeatStep(s hostile.Step, n int) []hostile.Step {
	out := make([]hostile.Step, n)
	for i := range out {
		out[i] = s
	}
	return out
}
