package adapter

import (
	"context"
	"flag"
	"testing"

	"acpkit.dev/adapter/internal/hostile"
)

// defectLoops is how many times the ordering and teardown tests of issue
// #22 repeat (under -race in make test).
var defectLoops = flag.Int("defect-loops", 300, "iterations of the hostile runtime's ordering and teardown tests")

// TestTD1_RequestsDuringStopNeverPanic: a runtime that keeps writing
// requests while StopSession runs has every one answered by the pump while
// teardown waits for the answers of TD-1; that wait must never be a
// sync.WaitGroup reused under a concurrent Add (a panic on an adapter
// goroutine, which kills the importing process, or a race report).
func TestTD1_RequestsDuringStopNeverPanic(t *testing.T) {
	unknown := hostile.Step{Kind: hostile.StepUnknown}
	r := newHostileRig(t, true, planOf(hostile.Turn{End: endTurn, Post: repeatStep(unknown, 400)}))
	for i := range *defectLoops {
		s := r.start(uint64(i), hostile.Size{}, defaultTestReadTimeout)
		if res, err, _ := r.turn(context.Background(), s, 0); err != nil {
			t.Fatalf("iteration %d: turn: %v (%+v)", i, err, res)
		}
		if err := r.a.StopSession(context.Background(), s); err != nil {
			t.Fatalf("iteration %d: StopSession: %v", i, err)
		}
	}
}
