package adapter

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/adapter/internal/launch"
)

// stopTimed stops s and returns how long it took.
func (h *harness) stopTimed(ctx context.Context, s Session) time.Duration {
	begin := time.Now()
	require.NoError(h.t, h.a.StopSession(ctx, s))
	return time.Since(begin)
}

func status(s Session) launch.ExitStatus {
	select {
	case <-s.s.proc.Exited():
		return s.s.proc.Status()
	default:
		return launch.ExitStatus{Code: -2, Signal: "still running"}
	}
}

// recordedReply is a replier that keeps the answer it was given.
type recordedReply struct {
	result any
	err    error
	done   chan struct{}
}

func newRecordedReply() *recordedReply { return &recordedReply{done: make(chan struct{})} }

func (r *recordedReply) Answer(result any, err error) { r.result, r.err = result, err; close(r.done) }
func (r *recordedReply) Skip()                        { close(r.done) }

func TestTD1_OpenRequestsAnsweredAtTeardown(t *testing.T) {
	a := &Adapter{now: time.Now}
	p := newPump(&session{a: a, log: slog.New(slog.DiscardHandler)})
	perm, elicit := newRecordedReply(), newRecordedReply()
	// Two requests read before teardown began, still queued to the pump.
	request := func(method, params string, reply replier) pumpProbe {
		return func(p *pump) {
			p.request(&acpsdk.Request{Method: method, Params: []byte(params), ID: []byte("1")}, reply, time.Now())
		}
	}
	require.True(t, p.post(request(gen.MethodSessionRequestPermission, `{"options":[{"optionId":"r","kind":"reject_once"}]}`, perm)))
	require.True(t, p.post(request(gen.MethodElicitationCreate, `{}`, elicit)))
	ack := make(chan struct{})
	p.handle(pumpMsg{ctl: pumpAnswerOpen{ack: ack}})
	<-ack
	<-perm.done
	assert.Equal(t, permissionCancelled, perm.result, "teardown answers cancelled, not the refusal")
	<-elicit.done
	assert.ErrorIs(t, elicit.err, acpsdk.ErrMethodNotFound)
	// A request arriving after teardown began gets the same answers.
	late := newRecordedReply()
	p.handle(pumpMsg{ctl: request(gen.MethodSessionRequestPermission, `{}`, late)})
	<-late.done
	assert.Equal(t, permissionCancelled, late.result)
	p.cancel()
	p.wg.Wait()
}

func TestTD3_TD5_LOG20_CooperativeExitLogsDebug(t *testing.T) {
	h := newHarness(t)
	s := h.start("no-eof-exit") // only the graceful signal ends it
	h.stop(s)
	recs := h.log.find("agent exited during the graceful phase")
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelDebug, recs[0].Level)
	assert.Equal(t, "exited", recs[0].Attrs["outcome"])
	assert.Equal(t, "signal: terminated", status(s).String())
}

func TestTD4_ClosedStdinEndsRuntimeIgnoringTerm(t *testing.T) {
	h := newHarness(t)
	s := h.start("ignore-term")
	h.stop(s)
	assert.Len(t, h.log.find("agent exited during the graceful phase"), 1)
	assert.Equal(t, "exit status 0", status(s).String())
}

func TestTD5_TD6_LOG20_StubbornRuntimeForceTerminated(t *testing.T) {
	h := newHarness(t)
	p := h.params("ignore-term", "no-eof-exit")
	p.Agent.StopGraceMS = 300
	s := h.startWith(p)
	took := h.stopTimed(context.Background(), s)
	recs := h.log.find("agent did not exit inside the graceful period and was force-terminated")
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelWarn, recs[0].Level)
	assert.Equal(t, "grace elapsed", recs[0].Attrs["outcome"])
	assert.Equal(t, "300ms", recs[0].Attrs["grace"])
	elapsed, err := time.ParseDuration(recs[0].Attrs["elapsed"])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, elapsed, 300*time.Millisecond)
	assert.Equal(t, "signal: killed", status(s).String(), "TD-6: the kill ends it")
	assert.Less(t, took, 300*time.Millisecond+3*h.a.drain+time.Second)
}

func TestTD5_CallerDeadlineOutcome(t *testing.T) {
	h := newHarness(t)
	s := h.start("ignore-term", "no-eof-exit")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	h.stopTimed(ctx, s)
	recs := h.log.find("agent did not exit inside the graceful period and was force-terminated")
	require.Len(t, recs, 1)
	assert.Equal(t, "caller deadline", recs[0].Attrs["outcome"])
	// The reap wait is cut by the caller's deadline too (TD-9), so the reap
	// of the killed group may land just after StopSession returns.
	select {
	case <-s.s.proc.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the killed runtime was never reaped")
	}
	assert.Equal(t, "signal: killed", status(s).String())
}

func TestTD7_TD8_TD10_TD11_EverythingClosed(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	require.NoError(t, h.a.StopSession(context.Background(), s), "TD-11: StopSession returns nil")
	select {
	case <-s.s.conn.Done():
	default:
		t.Fatal("connection still open")
	}
	select {
	case <-s.s.pump.done:
	default:
		t.Fatal("pump still running")
	}
	_, err := s.s.proc.Stderr().Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrClosed, "TD-10: the stderr read end is closed")
	_, err = s.s.proc.Stdout().Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrClosed)
}

// holderSession starts a session whose runtime, on the prompt "holder",
// leaves a descendant holding stdout and stderr and exits.
func holderSession(t *testing.T, detach bool, opts ...Option) (*harness, Session, *fakeagent.Holders) {
	hs, err := fakeagent.NewHolders()
	require.NoError(t, err)
	t.Cleanup(func() { hs.Release() })
	h := newHarness(t, opts...)
	args := []string{"holder=" + hs.Path}
	if detach {
		args = append(args, "detach")
	}
	return h, h.start(args...), hs
}

func TestDI8_OR1_OR2_OR4_LOG5_DescendantHoldingStdout(t *testing.T) {
	h, s, hs := holderSession(t, true)
	begin := time.Now()
	r, err, _ := h.turn(s, "holder")
	took := time.Since(begin)
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before the session finished collecting its output"})
	assert.Equal(t, EventTurnFailed, r.Outcome)
	assert.GreaterOrEqual(t, took, h.a.drain, "OR-1: the reader had the drain bound")
	assert.Less(t, took, h.a.drain+5*time.Second)
	recs := h.log.find("agent stdout was not fully collected before the session ended")
	require.Len(t, recs, 1)
	assert.Equal(t, h.a.drain.String(), recs[0].Attrs["drain_bound"])
	assert.Equal(t, 5*time.Second, drainBound, "the production bound")
	// OR-4: a later turn is refused with the same message.
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before the session finished collecting its output"})
	require.NoError(t, hs.Wait(1, 5*time.Second))
}

func TestTD9_TD12_TD13_OR5_DetachedHolderSurvivesBoundedStop(t *testing.T) {
	// The seed's mechanism: the process group alone (TD-15 turned off).
	h, s, hs := holderSession(t, true, WithContainment(ContainmentOff))
	_, err, _ := h.turn(s, "holder")
	require.Error(t, err)
	require.NoError(t, hs.Wait(1, 5*time.Second))
	took := h.stopTimed(context.Background(), s)
	// TD-13: stop grace (2 s here) + 3 × drain bound, plus overhead.
	assert.Less(t, took, 2*time.Second+3*h.a.drain+time.Second)
	assert.Equal(t, 1, hs.Alive(), "TD-12: a descendant outside the group survives")
}

func TestTD12_InGroupHolderKilled(t *testing.T) {
	h, s, hs := holderSession(t, false, WithContainment(ContainmentOff))
	_, err, _ := h.turn(s, "holder")
	require.Error(t, err)
	require.NoError(t, hs.Wait(1, 5*time.Second))
	h.stopTimed(context.Background(), s)
	assert.True(t, hs.WaitGone(5*time.Second), "the group kill reached the descendant")
}

func TestOR3_HandshakeDuringAbandonmentIsEarlyExit(t *testing.T) {
	hs, err := fakeagent.NewHolders()
	require.NoError(t, err)
	defer hs.Release()
	h := newHarness(t)
	err = h.startErr("holder-before-init", "holder="+hs.Path, "detach")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before responding: exit status 0"})
	assert.Len(t, h.log.find("agent stdout was not fully collected before the session ended"), 1)
}

func TestStopSessionOnStartThatNeverFinished(t *testing.T) {
	// The start is cancelled by its caller while the runtime never answers
	// initialize: the start tears down and StopSession on the result is a
	// no-op; nothing hangs.
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var s Session
	var err error
	// Cancel once the runtime has the initialize request.
	got := h.log.waitFor("agent stderr", "init received")
	wg.Add(1)
	go func() {
		defer wg.Done()
		s, err = h.a.StartSession(ctx, h.params("init-hang"))
	}()
	<-got
	cancel()
	wg.Wait()
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.NoError(t, h.a.StopSession(context.Background(), s))
}

// The fault matrix's descendant case at the production bound: the turn ends
// within the real 5 s drain bound with the exact port_exit message.
func TestDI8_ProductionDrainBound(t *testing.T) {
	hs, err := fakeagent.NewHolders()
	require.NoError(t, err)
	t.Cleanup(func() { hs.Release() })
	h := newHarness(t, withDrain(drainBound))
	s := h.start("holder="+hs.Path, "detach")
	begin := time.Now()
	_, err, _ = h.turn(s, "holder")
	took := time.Since(begin)
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before the session finished collecting its output"})
	assert.GreaterOrEqual(t, took, 5*time.Second)
	assert.Less(t, took, 7*time.Second)
	recs := h.log.find("agent stdout was not fully collected before the session ended")
	require.Len(t, recs, 1)
	assert.Equal(t, "5s", recs[0].Attrs["drain_bound"])
}

func TestTD1_RuntimeNotReadingCannotHoldTeardown(t *testing.T) {
	h := newHarness(t)
	p := h.params("stall-after-new")
	p.Agent.StopGraceMS = 400
	s := h.startWith(p)
	// A prompt far larger than a pipe buffer: its write blocks, and so
	// would any answer queued behind it.
	turnDone := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		_, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: strings.Repeat("x", 4<<20), OnEvent: func(e Event) {
			if e.Type == EventSessionStarted {
				close(started)
			}
		}})
		turnDone <- err
	}()
	<-started
	took := h.stopTimed(context.Background(), s)
	assert.Less(t, took, 400*time.Millisecond+time.Second, "TD-1 is bounded by half the grace window")
	assert.Equal(t, KindPortExit, KindOf(<-turnDone), "the open turn ends as a lost connection")
}
