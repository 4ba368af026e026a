package adapter

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cancelOnChunk returns a context cancelled once the first chunk arrives
// (the runtime has the prompt), and the event callback that does it.
func cancelOnChunk() (context.Context, func(), *events, func(Event)) {
	ctx, cancel := context.WithCancel(context.Background())
	ev := &events{}
	var once sync.Once
	return ctx, cancel, ev, func(e Event) {
		ev.on(e)
		if e.Type == EventNotification && e.Message == "" {
			once.Do(cancel)
		}
	}
}

func count(lines []string, sub string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

func TestTU2_CallerContextEndedFirst(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	_, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "stop:end_turn", OnEvent: func(Event) { called = true }})
	// Either the handshake saw the dead context, or the turn started and
	// was cancelled at once; in the first case nothing was sent. A started
	// turn's error wraps context.Canceled too (as its cause), so the kind
	// tells the two apart.
	if KindOf(err) == KindTurnCancelled {
		assert.True(t, called, "a started turn reports its events")
		assert.ErrorIs(t, err, context.Canceled)
	} else {
		assert.Equal(t, context.Canceled, err, "the caller's own error, unwrapped")
		assert.False(t, called)
		assert.Zero(t, count(h.wire(), `"session/prompt"`))
	}
}

func TestTU2_TurnStartHandshakeBounded(t *testing.T) {
	// A pump that never takes the request: the handshake gives up after the
	// read timeout.
	p := &pump{in: make(chan pumpMsg), done: make(chan struct{})}
	s := &session{readTimeout: 50 * time.Millisecond, pump: p}
	a := &Adapter{}
	r, err := a.RunTurn(context.Background(), Session{s: s}, TurnParams{})
	assert.ErrorIs(t, err, &Error{Kind: KindResponseTimeout, Message: "timed out waiting for the agent connection to start the turn"})
	assert.Equal(t, KindResponseTimeout, r.Kind)
	// A pump that takes the request but never accepts it.
	p2 := &pump{in: make(chan pumpMsg, 1), done: make(chan struct{})}
	s2 := &session{readTimeout: 50 * time.Millisecond, pump: p2}
	_, err = a.RunTurn(context.Background(), Session{s: s2}, TurnParams{})
	assert.Equal(t, KindResponseTimeout, KindOf(err))
	req := (<-p2.in).ctl.(pumpTurn).req
	select {
	case <-req.abandon:
	default:
		t.Fatal("the abandoned turn was not marked, so the pump could still start it")
	}
}

func TestTU3_DI6_CrashThenLaterTurnRefused(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, _ := h.turn(s, "chunk:m:x crash")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent's connection ended before a response arrived"})
	assert.Equal(t, EventTurnFailed, r.Outcome)
	_, err, ev := h.turn(s, "stop:end_turn")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent connection ended before this turn could start"})
	assert.Empty(t, ev.list(), "a refused turn emits nothing")
}

func TestTU5_PromptWireShape(t *testing.T) {
	h := newHarness(t)
	s := h.start("sid=s-5")
	_, err, _ := h.turn(s, `stop:end_turn "quoted"`)
	require.NoError(t, err) // the fake answers at "stop" and ignores the rest
	assert.JSONEq(t, `{"sessionId":"s-5","prompt":[{"type":"text","text":"stop:end_turn \"quoted\""}]}`, params(t, h.line("session/prompt")))
}

func TestTU6_NoCallbackAfterReturn(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	var returned atomic.Bool
	var late atomic.Int32
	cb := func(Event) {
		if returned.Load() {
			late.Add(1)
		}
	}
	_, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "chunk:m:a stop:end_turn", OnEvent: cb})
	returned.Store(true)
	require.NoError(t, err)
	// More traffic after the turn: a between-turn update and the stop.
	_, _, _ = h.turn(s, "chunk:m:b")
	h.stop(s)
	assert.Zero(t, late.Load())
}

func TestTU7_CancelSendsOneCancelAndEndsCancelled(t *testing.T) {
	h := newHarness(t)
	s := h.start("sid=s-7")
	ctx, cancel, ev, cb := cancelOnChunk()
	defer cancel()
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "chunk:m:x waitcancel:cancelled", OnEvent: cb})
	assert.ErrorIs(t, err, &Error{Kind: KindTurnCancelled, Message: "turn cancelled"})
	assert.NotErrorIs(t, err, context.Canceled, "the turn result, not the bare context error")
	assert.Equal(t, EventTurnCancelled, r.Outcome)
	assert.Equal(t, []string{"turn cancelled"}, ev.messages(EventTurnCancelled))
	h.stop(s)
	assert.Equal(t, 1, count(h.wire(), `"session/cancel"`))
	assert.JSONEq(t, `{"sessionId":"s-7"}`, params(t, h.line("session/cancel")))
}

func TestTU7_DI1_CancelOverridesResponse(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	ctx, cancel, _, cb := cancelOnChunk()
	defer cancel()
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "chunk:m:x waitcancel:end_turn", OnEvent: cb})
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.Equal(t, EventTurnCancelled, r.Outcome)
	// The session goes on.
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.NoError(t, err)
}

func TestTU7_CancelBoundedByReadTimeout(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.start()
	ctx, cancel, _, cb := cancelOnChunk()
	defer cancel()
	begin := time.Now()
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "chunk:m:x waitcancel:none", OnEvent: cb})
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.Equal(t, EventTurnCancelled, r.Outcome)
	assert.GreaterOrEqual(t, time.Since(begin), 200*time.Millisecond)
	// A late answer to the abandoned prompt does not disturb the next turn.
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.NoError(t, err)
}

func TestTU8_PermissionDuringEndAttemptIsCancelled(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	ctx, cancel, ev, cb := cancelOnChunk()
	defer cancel()
	_, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "chunk:m:x waitcancel-perm", OnEvent: cb})
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"cancelled"}}`)
	assert.NotContains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
}

func TestTU9_WriteFailureWithoutStreamEnd(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 300
	s := h.start("close-stdin-after-new")
	_, err, _ := h.turn(s, "stop:end_turn")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "failed to send the prompt to the agent"})
}

func TestTU10_LOG24_UnmatchedResponseIgnored(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, _ := h.turn(s, "stray stop:end_turn")
	require.NoError(t, err)
	recs := h.log.find("unmatched response")
	require.Len(t, recs, 1)
	assert.Equal(t, "999", recs[0].Attrs["id"])
}

func TestDI1_PM6_HumanInputOverridesResponse(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "perm:allow_once stop:end_turn")
	assert.ErrorIs(t, err, &Error{Kind: KindTurnInputRequired, Message: "agent asked for a decision only a person can make"})
	assert.Equal(t, EventTurnInputRequired, r.Outcome)
	assert.Equal(t, []string{"agent asked for a decision only a person can make"}, ev.messages(EventTurnInputRequired))
	// The runtime reads stdin in order: once it has the next prompt, it
	// has read the cancel too.
	_, err, _ = h.turn(s, "stop:end_turn")
	require.NoError(t, err)
	h.stop(s)
	assert.Equal(t, 1, count(h.wire(), `"session/cancel"`), "PM-6: one session/cancel")
}

func TestDI5_LOG9_HumanInputMessageAndWarn(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, _, _ := h.turn(s, "elicit stop:end_turn")
	assert.Equal(t, "agent asked for a decision only a person can make: an answer to a question", r.Message)
	recs := h.log.find("agent asked for a decision only a person can make, ending the attempt")
	require.Len(t, recs, 1)
	assert.Equal(t, "WARN", recs[0].Level.String())
}

func TestDI7_OversizeLineIsOutcomeUnknown(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, _ := h.turn(s, "oversize hang")
	assert.ErrorIs(t, err, &Error{Kind: KindTurnOutcomeUnknown, Message: "a line from the agent exceeded the connection's line bound"})
	assert.Equal(t, EventTurnFailed, r.Outcome)
	assert.NotEqual(t, KindPortExit, KindOf(err))
}

func TestTU9_DI6_WriteFailureThenStreamEnd(t *testing.T) {
	// The runtime closed its stdin, so the prompt's write fails; it is
	// killed as the turn starts, so its stream ends within the wait: the
	// turn reports the lost connection (DI-6), not the failed send.
	for i := range 5 {
		h := newHarness(t)
		s := h.start("close-stdin-after-new")
		r, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "stop:end_turn", OnEvent: func(e Event) {
			if e.Type == EventSessionStarted {
				s.s.proc.Kill()
			}
		}})
		assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent's connection ended before a response arrived"}, "iteration %d", i)
		assert.Equal(t, EventTurnFailed, r.Outcome)
		h.stop(s)
	}
}
