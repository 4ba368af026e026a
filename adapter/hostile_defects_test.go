package adapter

import (
	"context"
	"flag"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

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

// TestTU7_PM6_StaleCancelNeverReachesTheNextTurn: a turn whose attempt the
// adapter ends (PM-6: a permission with nothing to refuse) sends one
// session/cancel; when the runtime answers right after the request, in the
// same write, the turn ends at once and the next RunTurn follows. That
// cancel belongs to the ended turn: it must reach the wire before the next
// prompt, never after it, where the runtime (which here answers a cancel
// with "cancelled", as runtimes do) would cancel the new turn, ending it
// turn_failed. The next turn pauses before answering, so a cancel behind
// its prompt is read in time.
func TestTU7_PM6_StaleCancelNeverReachesTheNextTurn(t *testing.T) {
	person := hostile.Step{Kind: hostile.StepPerson}
	plan := planOf(
		hostile.Turn{End: hostile.Ending{Kind: hostile.EndPerson, Person: person, React: hostile.ReactAnswerAtOnce}},
		hostile.Turn{Pre: []hostile.Step{{Kind: hostile.StepDelay, Delay: 10 * time.Millisecond}}, End: endTurn},
	)
	synctest.Test(t, func(t *testing.T) {
		r := newHostileRig(t, true, plan)
		for i := range *defectLoops {
			s := r.start(uint64(i), hostile.Size{}, defaultTestReadTimeout)
			res, _, _ := r.turn(context.Background(), s, 0)
			if res.Outcome != EventTurnInputRequired {
				t.Fatalf("iteration %d: turn 0 ended %s %q, want turn_input_required", i, res.Outcome, res.Message)
			}
			res, err, _ := r.turn(context.Background(), s, 1)
			require.NoError(t, r.a.StopSession(context.Background(), s))
			if err != nil {
				t.Fatalf("iteration %d: turn 1 ended %s %q, want turn_completed; the runtime's trace:\n%s",
					i, res.Outcome, res.Message, strings.Join(r.record(s).Trace, "\n"))
			}
		}
	})
}
