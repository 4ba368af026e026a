package adapter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"acpkit.dev/adapter/internal/hostile"
)

// The concurrency and soak tests' sizes; make test runs these.
var (
	parallelSessions = flag.Int("hostile-sessions", 32, "sessions TestTD1_TU7_ParallelSessionsStopsRaceTurnsAndCancels runs at once")
	soakTurns        = flag.Int("hostile-soak-turns", 2000, "turns TestTU4_SoakOneSessionStaysFlat runs on one session")
)

// TestTD1_TU7_ParallelSessionsStopsRaceTurnsAndCancels runs many hostile
// sessions at once, in memory inside one synctest bubble, each running
// its plan's turns while another goroutine stops the session after a
// random number of events and the test cancels turns at random ones (and
// where the plan's runtime waits for a cancel).
// Whatever the interleaving: every RunTurn returns, a turn that started
// ends with exactly one terminal event, last, matching its result (DI-9,
// TU-6), one that did not start delivers nothing, StopSession returns,
// nothing panics, and no goroutine outlives the bubble.
func TestTD1_TU7_ParallelSessionsStopsRaceTurnsAndCancels(t *testing.T) {
	base := rand.Uint64() >> 1
	t.Logf("seeds from %d", base)
	synctest.Test(t, func(t *testing.T) {
		r := newHostileRig(t, true, nil)
		size := hostile.Size{Turns: 5, Steps: 6, Steady: true}
		var wg sync.WaitGroup
		for n := range uint64(*parallelSessions) {
			wg.Go(func() { raceSession(t, r, base+n, size) })
		}
		wg.Wait()
	})
}

// raceSession runs one session of the parallel test.
func raceSession(t *testing.T, r *hostileRig, seed uint64, size hostile.Size) {
	rng := rand.New(rand.NewPCG(seed, 1))
	plan := hostile.Generate(seed, size)
	s, err := r.a.StartSession(context.Background(), r.params(seed, size, defaultTestReadTimeout))
	if err != nil {
		t.Errorf("seed %d: StartSession: %v", seed, err)
		return
	}
	stopAt := int64(rng.IntN(40))
	var seen atomic.Int64
	stopNow := make(chan struct{})
	var once sync.Once
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-stopNow
		if err := r.a.StopSession(context.Background(), s); err != nil {
			t.Errorf("seed %d: StopSession: %v", seed, err)
		}
	}()
	for i := range plan.Turns {
		ctx, cancel := context.WithCancel(context.Background())
		cancelAt := int64(-1)
		if rng.IntN(3) == 0 {
			cancelAt = seen.Load() + int64(rng.IntN(10))
		}
		ev := &events{}
		planCancel := plan.Turns[i].CancelAt
		res, err := r.a.RunTurn(ctx, s, TurnParams{Prompt: hostile.Prompt(i), OnEvent: func(e Event) {
			ev.on(e)
			n := seen.Add(1)
			if n == cancelAt || planCancel > 0 && e.Type == EventToolResult && slices.Contains(seqsIn(e.Message), planCancel) {
				cancel()
			}
			if n >= stopAt {
				once.Do(func() { close(stopNow) })
			}
		}})
		cancel()
		if msg := turnShape(ev.list(), res, err); msg != "" {
			t.Errorf("seed %d, turn %d: %s", seed, i, msg)
		}
	}
	once.Do(func() { close(stopNow) })
	<-stopped
}

// turnShape checks the shape every turn has, whatever ended it: a turn
// that started ends with exactly one terminal event, last, matching the
// result and the error; one that did not start delivers nothing and
// returns an *Error or its context's error. It returns what is wrong, or
// "".
func turnShape(evs []Event, res TurnResult, err error) string {
	if len(evs) == 0 || evs[0].Type != EventSessionStarted {
		if len(evs) > 0 {
			return fmt.Sprintf("events without session_started: %v", eventTypes(evs))
		}
		if _, ok := errors.AsType[*Error](err); !ok && !errors.Is(err, context.Canceled) {
			return fmt.Sprintf("a turn that never started returned %v", err)
		}
		return ""
	}
	terminals := 0
	for _, ev := range evs {
		if isTerminal(ev.Type) {
			terminals++
		}
	}
	last := evs[len(evs)-1]
	switch {
	case terminals != 1 || !isTerminal(last.Type):
		return fmt.Sprintf("%d terminal events, want one, last: %v", terminals, eventTypes(evs))
	case last.Type != res.Outcome || last.Message != res.Message:
		return fmt.Sprintf("terminal event %s %q, result %s %q", last.Type, last.Message, res.Outcome, res.Message)
	case (err == nil) != (res.Outcome == EventTurnCompleted):
		return fmt.Sprintf("outcome %s with error %v", res.Outcome, err)
	}
	return ""
}

// TestTU4_SoakOneSessionStaysFlat runs thousands of turns of a steady
// hostile plan on one session of a child runtime (its turns drawn in
// turn) and checks that the session's cost does not grow with them: after
// a warm-up, the live heap, the goroutines and the open descriptors at
// the end are where they were, within a small fixed slack, and every turn
// had its one terminal event.
func TestTU4_SoakOneSessionStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of turns")
	}
	leaks := baseline(t)
	// The records are not kept: a log that keeps them grows by itself.
	r := newHostileRig(t, false, nil, WithLogger(slog.New(slog.DiscardHandler)))
	size := hostile.Size{Turns: 40, Steps: 5, Steady: true}
	const seed = 22
	plan := hostile.Generate(seed, size)
	s := r.start(seed, size, defaultTestReadTimeout)
	warm := *soakTurns / 10
	var before flatness
	outcomes := map[EventType]int{}
	for i := range *soakTurns {
		if i == warm {
			before = measureFlatness(t)
		}
		k := i % len(plan.Turns)
		ctx, cancel := context.WithCancel(context.Background())
		ev := &events{}
		cancelAt := plan.Turns[k].CancelAt
		res, err := r.a.RunTurn(ctx, s, TurnParams{Prompt: hostile.Prompt(k), OnEvent: func(e Event) {
			ev.on(e)
			if cancelAt > 0 && e.Type == EventToolResult && slices.Contains(seqsIn(e.Message), cancelAt) {
				cancel()
			}
		}})
		cancel()
		if msg := turnShape(ev.list(), res, err); msg != "" {
			t.Fatalf("turn %d (plan turn %d): %s", i, k, msg)
		}
		outcomes[res.Outcome]++
	}
	after := measureFlatness(t)
	t.Logf("%d turns: %v; live heap %d -> %d bytes, goroutines %d -> %d, descriptors %d -> %d",
		*soakTurns, outcomes, before.heap, after.heap, before.goroutines, after.goroutines, before.fds, after.fds)
	const heapSlack, goroutineSlack = 4 << 20, 8
	if after.heap > before.heap+heapSlack {
		t.Errorf("the live heap grew from %d to %d bytes over %d turns", before.heap, after.heap, *soakTurns-warm)
	}
	if after.goroutines > before.goroutines+goroutineSlack {
		t.Errorf("goroutines grew from %d to %d", before.goroutines, after.goroutines)
	}
	if after.fds > before.fds {
		t.Errorf("open descriptors grew from %d to %d", before.fds, after.fds)
	}
	if err := r.a.StopSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	leaks.check(t)
}

// flatness is what the soak compares.
type flatness struct {
	heap       uint64
	goroutines int
	fds        int
}

// measureFlatness measures after a collection. Answers the pump sent off
// its goroutine may still be finishing, hence the goroutine slack.
func measureFlatness(t *testing.T) flatness {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return flatness{heap: m.HeapAlloc, goroutines: runtime.NumGoroutine(), fds: openFDs(t)}
}
