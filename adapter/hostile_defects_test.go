package adapter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// TestTU2_EndedContextNeverStartsATurn: a context that ended before
// RunTurn, or ends while the pump is offering the turn's start, must
// return the context's error with no event and no prompt sent (TU-2):
// the pump must not start a turn its caller gave up on. Inside a synctest
// bubble, handshakeCtx ends (or is seen ended) exactly when the pump is
// blocked offering the start, so both are ready at RunTurn's wait.
func TestTU2_EndedContextNeverStartsATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newHostileRig(t, true, planOf(hostile.Turn{End: endTurn}))
		s := r.start(0, hostile.Size{}, defaultTestReadTimeout)
		for _, endedBefore := range []bool{true, false} {
			for i := range *defectLoops {
				ctx := newHandshakeCtx(endedBefore)
				res, err, evs := r.turn(ctx, s, 0)
				if !errors.Is(err, context.Canceled) || len(evs) > 0 {
					t.Fatalf("ended before the call %v, iteration %d: RunTurn returned %v (%s %q) after %d events, want context.Canceled and none",
						endedBefore, i, err, res.Outcome, res.Message, len(evs))
				}
			}
		}
		res, err, _ := r.turn(context.Background(), s, 0)
		require.NoError(t, err, "%+v", res)
		require.NoError(t, r.a.StopSession(context.Background(), s))
		var prompts []string
		for _, line := range r.record(s).Trace {
			if strings.HasPrefix(line, "read prompt") {
				prompts = append(prompts, line)
			}
		}
		require.Len(t, prompts, 1, "only the last turn's prompt reaches the runtime")
	})
}

// handshakeCtx is a context for TU-2's race, inside a synctest bubble: at
// the second look at its Done channel (RunTurn's wait for the pump's
// answer) it first waits until every other goroutine is blocked, the pump
// then offering the start, and ends there unless it had ended before.
type handshakeCtx struct {
	done  chan struct{}
	looks atomic.Int32
	end   sync.Once
}

func newHandshakeCtx(endedBefore bool) *handshakeCtx {
	c := &handshakeCtx{done: make(chan struct{})}
	if endedBefore {
		c.end.Do(func() { close(c.done) })
	}
	return c
}

func (c *handshakeCtx) Done() <-chan struct{} {
	if c.looks.Add(1) == 2 {
		synctest.Wait()
		c.end.Do(func() { close(c.done) })
	}
	return c.done
}

func (c *handshakeCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func (c *handshakeCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *handshakeCtx) Value(any) any               { return nil }

// TestSS2_SS3_SecretAcrossTheLineCutIsMasked: a runtime that exits before
// initialize with a secret of its environment on stderr, placed across the
// collector's 64 KiB line cut (most of it before the cut, its end after),
// or split by an escape sequence: no piece of it may reach the early exit
// report's tail (SS-3), the stderr records logged while draining or
// re-logged after the failed start (SS-2, LOG-21), or any other record.
func TestSS2_SS3_SecretAcrossTheLineCutIsMasked(t *testing.T) {
	for _, straddle := range []int{1, secretProbe, len(hostileSecret) / 2, len(hostileSecret) - 1} {
		plan := func(seed uint64, _ hostile.Size) hostile.Plan {
			return hostile.Plan{Seed: seed, ExitBeforeInit: true, ExitCode: 3, Stderr: []hostile.StderrLine{
				{Secret: true, Straddle: straddle},
				{Secret: true, Escape: true},
				{Secret: true},
			}}
		}
		t.Run(fmt.Sprintf("straddle-%d", straddle), func(t *testing.T) {
			r := newHostileRig(t, true, plan)
			_, err := r.a.StartSession(context.Background(), r.params(0, hostile.Size{}, defaultTestReadTimeout))
			require.Error(t, err)
			require.Contains(t, err.Error(), "the agent runtime exited before responding: exit status 3")
			checkNoSecret(t, r, errorChain(err), nil)
			require.NotEmpty(t, r.log.find("agent stderr"), "the stderr lines were logged")
		})
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(len(s)-n, 0):] }

// TestEV11_LOG22_EventsDroppedBetweenTurnsAreCountedLoggedAndTold: a runtime
// that floods chunks between turns overflows the queue kept for the next
// turn (EV-11). The newest are delivered; the drop is counted, logged at
// Warn with the count and the bound, and the next turn is told how many
// events it did not get, before the ones it gets.
func TestEV11_LOG22_EventsDroppedBetweenTurnsAreCountedLoggedAndTold(t *testing.T) {
	const chunks = 5000
	flood := hostile.Step{Kind: hostile.StepFlood}
	for i := range chunks {
		flood.Seqs = append(flood.Seqs, i+1)
	}
	synctest.Test(t, func(t *testing.T) {
		r := newHostileRig(t, true, planOf(hostile.Turn{End: endTurn, Post: []hostile.Step{flood}}, hostile.Turn{End: endTurn}))
		s := r.start(0, hostile.Size{}, defaultTestReadTimeout)
		_, err, _ := r.turn(context.Background(), s, 0)
		require.NoError(t, err)
		// The whole flood is read between the turns.
		synctest.Wait()
		_, err, evs := r.turn(context.Background(), s, 1)
		require.NoError(t, err)
		checkOverflowTold(t, r, evs, chunks)
	})
}

// checkOverflowTold checks the drop of EV-11's queue told to the turn
// that got evs, the chunks before it numbered 1 to chunks.
func checkOverflowTold(t *testing.T, r *hostileRig, evs []Event, chunks int) {
	var notice string
	var seqs []int
	for _, ev := range evs {
		if strings.Contains(ev.Message, "were dropped") {
			require.Empty(t, seqs, "the notice comes before the queued events")
			notice = ev.Message
		}
		seqs = append(seqs, seqsIn(ev.Message)...)
	}
	recs := r.log.find(logQueueOverflow)
	require.Len(t, recs, 1, "one record for the drop")
	require.Equal(t, "WARN", recs[0].Level.String())
	require.Equal(t, strconv.Itoa(maxQueued), recs[0].Attrs["bound"])
	count, err := strconv.Atoi(recs[0].Attrs["count"])
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf(msgQueueOverflow, count, maxQueued), notice, "the next turn is told the count")
	// The newest survive, in order, up to the last chunk; each chunk is
	// two events (its own and its message's), so what was dropped covers
	// what is missing.
	require.NotEmpty(t, seqs)
	require.Equal(t, chunks, seqs[len(seqs)-1])
	for i, seq := range seqs {
		require.Equal(t, seqs[0]+i, seq, "events in wire order, none lost after the drop")
	}
	require.GreaterOrEqual(t, count, seqs[0]-1, "every missing chunk is counted")
	require.Empty(t, r.log.find(logDroppingQueued))
}

// seqRE finds the sequence numbers the hostile runtime writes in its text
// chunks and tool titles.
var seqRE = regexp.MustCompile(`\bs([0-9]+)\b`)

// seqsIn returns the sequence numbers in an event message, in order.
func seqsIn(msg string) []int {
	var out []int
	for _, m := range seqRE.FindAllStringSubmatch(msg, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}
