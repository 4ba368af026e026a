package adapter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/hostile"
	"acpkit.dev/adapter/internal/normalize"
)

// The property suite's sizes: make test runs these; `make fuzz` runs
// FuzzHostileRuntime over the seed for as long as FUZZTIME says.
var (
	hostileSeeds      = flag.Int("hostile-seeds", 32, "seeds TestDI9_EV13_HostileRuntimeSeeds runs in memory")
	hostileChildSeeds = flag.Int("hostile-child-seeds", 3, "seeds it runs as child processes, with the fd, process and temp-dir checks")
	hostileBase       = flag.Uint64("hostile-base", 0, "first seed of TestDI9_EV13_HostileRuntimeSeeds (0: a random one, logged)")
)

// hostileRegressions are seeds that once broke a property: each runs
// regressionRuns times on every make test, in memory, and seeds
// FuzzHostileRuntime's corpus. A failing seed is printed as "hostile seed
// N" with its plan; add N here with what it broke. (The grammar decides
// what a seed means: a change to it makes new seeds of these.)
var hostileRegressions = []uint64{
	// Issue #22 (each found by this suite with its fix reverted):
	// a turn's session/cancel read behind the next prompt, which the
	// runtime then answered "cancelled" (TU-7, PM-6);
	2060870429878707277, 2060870429878707356,
	// a call with an ended context that still started a turn (TU-2);
	5743626357293974091,
	// the secret's head before the stderr line cut (SS-2, SS-3);
	4449709989960676200,
	// events dropped between turns without a word (EV-11).
	8212043383583736533, 8212043383583736549,
}

// regressionRuns is how often each regression seed runs: some of what
// they found (the stale cancel) is an ordering that a run meets only
// sometimes.
const regressionRuns = 5

// propertySize is the size of the plans the suite draws.
// Its floods are mostly over what the queue between turns keeps (4,096
// events, two a chunk).
var propertySize = hostile.Size{Turns: 6, Steps: 8, Flood: 2600, Delay: 20 * time.Millisecond}

// propertyReadTimeout is the sessions' read timeout: a bound on a bubble's
// clock, so long enough never to be reached by work; in a child it bounds
// the waits for runtimes that never answer a cancel.
const propertyReadTimeout = 3 * time.Second

// TestDI9_EV13_HostileRuntimeSeeds runs the hostile runtime for a bounded
// number of seeds and checks what the spec says of every turn plus the
// universal invariants (checkSeed): the regression seeds and a run of
// fresh ones in memory, each in a synctest bubble, and a few as child
// processes, which also check that nothing is left after StopSession.
func TestDI9_EV13_HostileRuntimeSeeds(t *testing.T) {
	base := *hostileBase
	if base == 0 {
		base = rand.Uint64() >> 1
	}
	t.Logf("seeds from %d (rerun with -hostile-base %d)", base, base)
	for _, seed := range hostileRegressions {
		t.Run(fmt.Sprintf("regression-%d", seed), func(t *testing.T) {
			for range regressionRuns {
				checkSeed(t, true, seed, propertySize)
			}
		})
	}
	for i := range uint64(*hostileSeeds) {
		t.Run(fmt.Sprintf("memory-%d", base+i), func(t *testing.T) { checkSeed(t, true, base+i, propertySize) })
	}
	for i := range uint64(*hostileChildSeeds) {
		seed := base + uint64(*hostileSeeds) + i
		t.Run(fmt.Sprintf("child-%d", seed), func(t *testing.T) { checkSeed(t, false, seed, propertySize) })
	}
}

// FuzzHostileRuntime is the suite under `make fuzz`: any seed, in memory.
// A failing seed is kept in testdata/fuzz, so it reruns with every test
// run, and belongs in hostileRegressions too.
func FuzzHostileRuntime(f *testing.F) {
	for _, seed := range hostileRegressions {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkSeed(t, true, seed, propertySize) })
}

// turnRun is what one RunTurn of a seed did.
type turnRun struct {
	res       TurnResult
	err       error
	evs       []Event
	cancelled bool // the test cancelled the turn's context
	took      time.Duration
}

// checkSeed runs the plan of seed and checks it. In memory it runs inside
// a synctest bubble (the runtime's delays and the adapter's bounds take no
// real time, and a goroutine left behind fails the bubble); as a child it
// checks goroutines, descriptors, the process and temporary files itself.
func checkSeed(t *testing.T, mem bool, seed uint64, size hostile.Size) {
	plan := hostile.Generate(seed, size)
	failed := true
	defer func() {
		if failed || t.Failed() {
			t.Logf("hostile seed %d failed; %s", seed, plan)
		}
	}()
	if mem {
		synctest.Test(t, func(t *testing.T) { runSeed(t, true, plan, size) })
	} else {
		leaks := baseline(t)
		runSeed(t, false, plan, size)
		leaks.check(t)
	}
	failed = false
}

// runSeed starts a session of plan, runs its turns, stops it and checks.
func runSeed(t *testing.T, mem bool, plan hostile.Plan, size hostile.Size) {
	r := newHostileRig(t, mem, nil)
	r.plan = plan
	var extra []string
	recPath := filepath.Join(r.dir, "runtime.record")
	if !mem {
		extra = append(extra, "record="+recPath)
	}
	var texts []string // every error text, to look for the secret
	s, err := r.a.StartSession(context.Background(), r.params(plan.Seed, size, propertyReadTimeout, extra...))
	if plan.ExitBeforeInit {
		if err == nil || !strings.Contains(err.Error(), "the agent runtime exited before responding") {
			t.Fatalf("a runtime that exits before initialize: StartSession returned %v, want SS-3's early exit report", err)
		}
		checkNoSecret(t, r, errorChain(err), nil)
		return
	}
	if err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	runs := make([]turnRun, len(plan.Turns))
	for i, pt := range plan.Turns {
		if pt.Settled && mem {
			synctest.Wait()
		}
		if pt.Abandon != hostile.AbandonNone {
			abandonTurn(t, r, s, i, pt.Abandon, mem)
		}
		runs[i] = runTurn(t, r, s, i, pt, mem)
		if runs[i].err != nil {
			texts = append(texts, runs[i].err.Error())
		}
	}
	if err := r.a.StopSession(context.Background(), s); err != nil {
		t.Fatalf("StopSession: %v", err)
	}
	select {
	case <-s.s.proc.Exited():
	default:
		t.Fatalf("the runtime was not reaped by StopSession")
	}
	var rec hostile.Record
	if mem {
		rec = r.record(s)
	} else {
		b, err := os.ReadFile(recPath)
		if err != nil {
			t.Fatal(err)
		}
		rec = hostile.ReadRecord(string(b))
	}
	defer func() {
		if t.Failed() {
			t.Logf("the runtime's trace:\n  %s", strings.Join(rec.Trace, "\n  "))
		}
	}()
	for i, run := range runs {
		checkTurn(t, plan, i, run, mem, carriedPersons(plan, runs, rec, i) > 0)
	}
	checkWireOrder(t, runs, rec)
	var evs []Event
	for _, run := range runs {
		evs = append(evs, run.evs...)
	}
	checkNoSecret(t, r, texts, evs)
}

// runTurn runs turn i, cancelling its context at the plan's tool call.
func runTurn(t *testing.T, r *hostileRig, s Session, i int, pt hostile.Turn, mem bool) turnRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var run turnRun
	ev := &events{}
	onEvent := func(e Event) {
		ev.on(e)
		if pt.CancelAt > 0 && e.Type == EventToolResult && slices.Contains(seqsIn(e.Message), pt.CancelAt) {
			run.cancelled = true // on the pump, before RunTurn returns
			cancel()
		}
	}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run.res, run.err = r.a.RunTurn(ctx, s, TurnParams{Prompt: hostile.Prompt(i), OnEvent: onEvent})
	}()
	if mem {
		<-done // a turn that never ends is the bubble's deadlock
	} else {
		watchdog := time.NewTimer(time.Minute)
		defer watchdog.Stop()
		select {
		case <-done:
		case <-watchdog.C:
			buf := make([]byte, 1<<20)
			t.Fatalf("turn %d did not end within a minute; goroutines:\n%s", i, buf[:runtime.Stack(buf, true)])
		}
	}
	run.took = time.Since(start)
	run.evs = ev.list()
	return run
}

// abandonTurn calls RunTurn for turn i with a context that has ended, or
// (in a bubble) ends while the pump offers the start: TU-2 wants the
// context's error, no event, and no prompt (the runtime would run the
// turn, which checkWireOrder and the next turn's outcome would show).
func abandonTurn(t *testing.T, r *hostileRig, s Session, i int, how hostile.Abandon, mem bool) {
	t.Helper()
	var ctx context.Context
	if mem {
		ctx = newHandshakeCtx(how == hostile.AbandonBefore)
	} else {
		c, cancel := context.WithCancel(context.Background())
		cancel()
		ctx = c
	}
	res, err, evs := r.turn(ctx, s, i)
	if e, ok := errors.AsType[*Error](err); ok && e.Kind == KindPortExit && len(evs) == 0 && exitedBefore(r.plan, i) {
		return // refused as TU-3 says, as the context ended: either is the answer
	}
	if !errors.Is(err, context.Canceled) || len(evs) > 0 {
		t.Errorf("turn %d, abandoned: RunTurn returned %v (%s %q) after %v, want context.Canceled and no event (TU-2)",
			i, err, res.Outcome, res.Message, eventTypes(evs))
	}
}

// Outcomes as "event/kind", the pairs checkTurn compares.
func outcome(o EventType, k Kind) string { return string(o) + "/" + string(k) }

var (
	ocCompleted     = outcome(EventTurnCompleted, "")
	ocCancelled     = outcome(EventTurnCancelled, KindTurnCancelled)
	ocInputRequired = outcome(EventTurnInputRequired, KindTurnInputRequired)
	ocPortExit      = outcome(EventTurnFailed, KindPortExit)
	ocUnknown       = outcome(EventTurnFailed, KindTurnOutcomeUnknown)
	ocResponseError = outcome(EventTurnFailed, KindResponseError)
	ocUnrequested   = outcome(EventTurnFailed, KindTurnFailed)
)

// stopOutcomes is DI-2's table.
var stopOutcomes = map[string]string{
	"end_turn":          ocCompleted,
	"refusal":           outcome(EventTurnFailed, KindTurnRefused),
	"max_tokens":        outcome(EventTurnFailed, KindTurnTokenLimit),
	"max_turn_requests": outcome(EventTurnFailed, KindTurnRequestLimit),
	"cancelled":         ocUnrequested,
}

// carriedPersons is how many of the requests only a person can answer
// that the runtime wrote between turns before turn i-1's, may still be
// pending at turn i: PM-7 latches an ending from a request between turns,
// and the next turn ends with it without sending its prompt — one ending
// for the requests read by then. A request read after that turn ended is
// between turns again, latched for the turn after (PM-7). A turn that sent
// its prompt took every request written before it (PM-6, PM-7).
func carriedPersons(plan hostile.Plan, runs []turnRun, rec hostile.Record, i int) int {
	pending := 0
	for k := 1; k < i; k++ {
		pending += persons(plan.Turns[k-1].Post)
		latched := !rec.ReadPrompt(k) && runs[k].res.Outcome == EventTurnInputRequired
		if !latched {
			pending = 0
			continue
		}
		pending = max(pending-1, 0) // it took one, perhaps more
	}
	return pending
}

// persons counts the steps of steps only a person can answer.
func persons(steps []hostile.Step) int {
	n := 0
	for _, s := range steps {
		if s.Kind == hostile.StepPerson {
			n++
		}
	}
	return n
}

// allowedOutcomes is what the spec allows turn i of plan to end with,
// given whether the test cancelled it and whether a request only a person
// can answer may be carried over from before turn i-1 (carriedPersons):
// every cause the plan puts in the turn may be the one read first.
func allowedOutcomes(plan hostile.Plan, i int, cancelled, carried bool) map[string]bool {
	pt := plan.Turns[i]
	ok := map[string]bool{}
	if carried {
		ok[ocInputRequired] = true // PM-7
	}
	var before []hostile.Step // what the runtime writes ahead of this turn's end
	if i > 0 {
		before = plan.Turns[i-1].Post
	}
	before = append(slices.Clone(before), pt.Pre...)
	refused := false
	for _, s := range before {
		switch s.Kind {
		case hostile.StepRefusable:
			refused = true // DI-10
		case hostile.StepPerson:
			ok[ocInputRequired] = true // PM-6, PM-7
		}
	}
	if cancelled {
		ok[ocCancelled] = true // TU-7, DI-1
	}
	switch e := pt.End; e.Kind {
	case hostile.EndAnswer:
		if o, known := stopOutcomes[e.StopReason]; known {
			ok[o] = true
		} else {
			ok[ocUnknown] = true // DI-2: outside the schema
		}
		if e.StopReason == "cancelled" && refused {
			ok[ocInputRequired] = true // DI-10
		}
	case hostile.EndError:
		ok[ocResponseError] = true // DI-3
	case hostile.EndUndecodable, hostile.EndOversize:
		ok[ocUnknown] = true // DI-4, DI-7
	case hostile.EndPerson:
		ok[ocInputRequired] = true // PM-2, PM-3, PM-6
	case hostile.EndExit:
		ok[ocPortExit] = true // DI-6
	}
	return ok
}

// exitedBefore reports whether a turn before i ended the runtime.
func exitedBefore(plan hostile.Plan, i int) bool {
	for _, pt := range plan.Turns[:i] {
		if pt.End.Kind == hostile.EndExit {
			return true
		}
	}
	return false
}

// checkTurn checks one turn: DI-9's one terminal event, last, matching the
// result and the error; TU-6's nothing after it; the outcome the spec
// allows; and the turn's bound.
func checkTurn(t *testing.T, plan hostile.Plan, i int, run turnRun, mem, carried bool) {
	t.Helper()
	started := len(run.evs) > 0 && run.evs[0].Type == EventSessionStarted
	if !started {
		if len(run.evs) > 0 {
			t.Errorf("turn %d: events without session_started first: %v", i, eventTypes(run.evs))
		}
		e, isErr := errors.AsType[*Error](run.err)
		switch {
		case !isErr:
			t.Errorf("turn %d never started, and its error %v is no *Error", i, run.err)
		case e.Kind == KindPortExit && exitedBefore(plan, i): // TU-3
		case e.Kind == KindResponseTimeout && !mem: // TU-2, under load
		default:
			t.Errorf("turn %d never started: %v (kind %s)", i, run.err, e.Kind)
		}
		return
	}
	var terminals []Event
	for _, ev := range run.evs {
		if isTerminal(ev.Type) {
			terminals = append(terminals, ev)
		}
	}
	last := run.evs[len(run.evs)-1]
	switch {
	case len(terminals) != 1:
		t.Errorf("turn %d: %d terminal events, want exactly one (DI-9): %v", i, len(terminals), eventTypes(run.evs))
		return
	case !isTerminal(last.Type):
		t.Errorf("turn %d: an event after the terminal one (TU-6): %v", i, eventTypes(run.evs))
		return
	case last.Type != run.res.Outcome || last.Message != run.res.Message:
		t.Errorf("turn %d: terminal event %s %q, result %s %q", i, last.Type, last.Message, run.res.Outcome, run.res.Message)
	case (run.err == nil) != (run.res.Outcome == EventTurnCompleted):
		t.Errorf("turn %d: outcome %s with error %v (DI-9)", i, run.res.Outcome, run.err)
	}
	if run.err != nil {
		if e, ok := errors.AsType[*Error](run.err); !ok || e.Kind != run.res.Kind {
			t.Errorf("turn %d: error %v is not an *Error of kind %s", i, run.err, run.res.Kind)
		}
	}
	got := outcome(run.res.Outcome, run.res.Kind)
	allowed := allowedOutcomes(plan, i, run.cancelled, carried)
	if exitedBefore(plan, i) {
		allowed[ocPortExit] = true
	}
	if !allowed[got] {
		t.Errorf("turn %d ended %s %q; the spec allows %v for %s (cancelled by the test: %v)",
			i, got, run.res.Message, slices.Sorted(mapKeys(allowed)), plan.Turns[i].End, run.cancelled)
	}
	if run.res.Outcome == EventTurnFailed && run.res.Message == normalize.MsgUnrequestedCancel && !allowed[ocUnrequested] {
		t.Errorf("turn %d: the runtime answered a cancel nobody sent for this turn", i)
	}
	if mem {
		// On the bubble's clock a turn takes what the runtime waits
		// (its delays and pauses, the earlier turns' too, which may
		// still run) and at most one read timeout of an end attempt;
		// the turn start's own bound never runs out.
		delays := time.Duration(i+1) * hostile.Settle
		for _, pt := range plan.Turns[:i+1] {
			for _, s := range slices.Concat(pt.Pre, pt.Post) {
				delays += s.Delay
			}
		}
		if bound := delays + propertyReadTimeout; run.took > bound {
			t.Errorf("turn %d took %v on the bubble's clock, over its bound %v", i, run.took, bound)
		}
	}
}

func isTerminal(e EventType) bool {
	switch e {
	case EventTurnCompleted, EventTurnFailed, EventTurnCancelled, EventTurnInputRequired:
		return true
	}
	return false
}

func eventTypes(evs []Event) []EventType {
	out := make([]EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkWireOrder checks EV-13 over the whole session: the sequence numbers
// delivered, turn after turn, rise strictly (nothing reordered or
// duplicated), every one the runtime wrote; and one it wrote is missing
// before the last one delivered only where a turn was told of a drop
// (EV-11), no more than it was told. Those after the last one delivered
// were not read, or were dropped at teardown (LOG-22), when StopSession
// came.
func checkWireOrder(t *testing.T, runs []turnRun, rec hostile.Record) {
	t.Helper()
	written := map[int]bool{}
	for _, s := range rec.Wrote {
		written[s] = true
	}
	var got []int
	told := 0
	for _, run := range runs {
		for _, ev := range run.evs {
			if n, ok := overflowCount(ev.Message); ok {
				told += n
			}
			got = append(got, seqsIn(ev.Message)...)
		}
	}
	for i, s := range got {
		if !written[s] {
			t.Errorf("s%d delivered, never written", s)
		}
		if i > 0 && s <= got[i-1] {
			t.Errorf("s%d delivered after s%d: out of wire order or twice (EV-13)", s, got[i-1])
			return
		}
	}
	if len(got) == 0 {
		return
	}
	delivered := map[int]bool{}
	for _, s := range got {
		delivered[s] = true
	}
	missing := 0
	for _, s := range rec.Wrote {
		if s < got[len(got)-1] && !delivered[s] {
			missing++
		}
	}
	if missing > told {
		t.Errorf("%d written events missing before s%d, and the turns were told of %d dropped (EV-11)", missing, got[len(got)-1], told)
	}
}

// overflowCount reads EV-11's drop notice.
func overflowCount(msg string) (int, bool) {
	var n, bound int
	if _, err := fmt.Sscanf(msg, msgQueueOverflow, &n, &bound); err != nil {
		return 0, false
	}
	return n, true
}

// errorChain is the text of err and of every error it wraps.
func errorChain(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error())
	}
	return out
}

// checkNoSecret: no piece of the secret the runtime wrote to stderr in any
// error, event or log record.
func checkNoSecret(t *testing.T, r *hostileRig, errs []string, evs []Event) {
	t.Helper()
	texts := slices.Clone(errs)
	for _, ev := range evs {
		texts = append(texts, ev.Message)
	}
	for _, rec := range r.log.all() {
		texts = append(texts, rec.Message)
		for k, v := range rec.Attrs {
			texts = append(texts, k+"="+v)
		}
	}
	for _, text := range texts {
		if piece, ok := leaksSecret(text); ok {
			t.Errorf("%q of the secret in %q", piece, tail(text, 160))
		}
	}
}

// leakBaseline is what a child seed must leave as it found: goroutines,
// open descriptors, and an empty temporary directory (TMPDIR points the
// adapter and the runtime at one of the test's own).
type leakBaseline struct {
	goroutines goleak.Option
	fds        int
	tmp        string
}

func baseline(t *testing.T) leakBaseline {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return leakBaseline{goroutines: goleak.IgnoreCurrent(), fds: openFDs(t), tmp: tmp}
}

func (b leakBaseline) check(t *testing.T) {
	t.Helper()
	goleak.VerifyNone(t, b.goroutines)
	if n := openFDs(t); n > b.fds {
		t.Errorf("%d descriptors open after StopSession, %d before the session", n, b.fds)
	}
	left, err := os.ReadDir(b.tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// openFDs counts this process's open descriptors (Linux; elsewhere 0).
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}
