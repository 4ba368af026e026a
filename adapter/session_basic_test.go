package adapter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSS1_StartReturnsSessionIDAndPID(t *testing.T) {
	h := newHarness(t)
	s := h.start("sid=abc-123")
	assert.Equal(t, "abc-123", s.ID)
	assert.NotEmpty(t, s.AgentPID)
	assert.Equal(t, s.s.proc.PID(), s.AgentPID)
}

func TestTU4_TurnEventsInOrder(t *testing.T) {
	h := newHarness(t)
	s := h.start("load")
	r, err, ev := h.turn(s, "chunk:m1:Hello, chunk:m1:world")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Equal(t, s.ID, r.SessionID)
	types := ev.types()
	require.GreaterOrEqual(t, len(types), 3)
	assert.Equal(t, EventSessionStarted, types[0])
	evs := ev.list()
	assert.Equal(t, "session started", evs[0].Message)
	assert.Equal(t, s.AgentPID, evs[0].AgentPID)
	assert.Equal(t, s.ID, evs[0].SessionID)
	assert.Equal(t, "this session started with a declared capability gap in: token counts", evs[1].Message)
	assert.Equal(t, []string{"this session started with a declared capability gap in: token counts", "Hello,world"}, ev.texts())
	assert.Equal(t, EventTurnCompleted, types[len(types)-1])
	for _, e := range evs {
		assert.Equal(t, "UTC", e.Time.Location().String())
	}

	// The notice goes out once per session (CAP-6); session_started every turn.
	_, err, ev = h.turn(s, "")
	require.NoError(t, err)
	assert.Equal(t, []EventType{EventSessionStarted, EventTurnCompleted}, ev.types())
}

func TestTU1_SecondConcurrentTurnRefused(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		var once sync.Once
		ev := func(e Event) {
			// The chunk's empty notification: the runtime has the prompt.
			if e.Type == EventNotification && e.Message == "" {
				once.Do(func() { close(started) })
			}
		}
		_, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "chunk:m:x waitcancel:end_turn", OnEvent: ev})
		done <- err
	}()
	<-started
	r, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "stop:end_turn"})
	require.Error(t, err)
	assert.Equal(t, KindResponseError, KindOf(err))
	assert.Equal(t, "a turn is already in flight for this session", r.Message)
	// Nothing reached the runtime for the refused turn.
	prompts := 0
	for _, l := range h.wire() {
		if strings.Contains(l, `"session/prompt"`) {
			prompts++
		}
	}
	assert.Equal(t, 1, prompts)
	h.stop(s)
	assert.Error(t, <-done)
}

func TestDI9_ErrorExactlyWhenNotCompleted(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "stop:refusal")
	var ae *Error
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, KindTurnRefused, ae.Kind)
	assert.Equal(t, "turn failed", ae.Message)
	assert.Equal(t, EventTurnFailed, r.Outcome)
	terminal := 0
	for _, e := range ev.list() {
		switch e.Type {
		case EventTurnCompleted, EventTurnFailed, EventTurnCancelled, EventTurnInputRequired:
			terminal++
			assert.Equal(t, "turn failed", e.Message)
		}
	}
	assert.Equal(t, 1, terminal)
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.NoError(t, err)
}

func TestDI2_StopReasonsOverTheWire(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	cases := []struct {
		prompt  string
		outcome EventType
		kind    Kind
		msg     string
	}{
		{"stop:end_turn", EventTurnCompleted, "", "turn completed"},
		{"stop:refusal", EventTurnFailed, KindTurnRefused, "turn failed"},
		{"stop:max_tokens", EventTurnFailed, KindTurnTokenLimit, "turn failed"},
		{"stop:max_turn_requests", EventTurnFailed, KindTurnRequestLimit, "turn failed"},
		{"stop:cancelled", EventTurnFailed, KindTurnFailed, "agent reported a cancelled stop reason without a cancellation on either side"},
		{"stop:paused", EventTurnFailed, KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: "paused"`},
		// The whole message is capped at 500 runes, not the value in it.
		{"stop:" + strings.Repeat("q", 600), EventTurnFailed, KindTurnOutcomeUnknown,
			`agent reported an unrecognized stop reason: "` + strings.Repeat("q", 455) + "…"},
	}
	for _, c := range cases {
		r, err, _ := h.turn(s, c.prompt)
		assert.Equal(t, c.outcome, r.Outcome, c.prompt)
		assert.Equal(t, c.kind, r.Kind, c.prompt)
		assert.Equal(t, c.msg, r.Message, c.prompt)
		assert.Equal(t, c.kind, KindOf(err), c.prompt)
		assert.Equal(t, c.outcome == EventTurnCompleted, err == nil, c.prompt)
	}
}

func TestDI3_PromptErrorResponse(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "err:-32603")
	assert.Equal(t, KindResponseError, KindOf(err))
	assert.Equal(t, EventTurnFailed, r.Outcome)
	assert.Equal(t, "session/prompt error -32603: prompt went wrong", r.Message)
	assert.Equal(t, []string{"session/prompt error -32603: prompt went wrong"}, ev.messages(EventTurnFailed))
}

func TestDI4_UndecodablePromptResult(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, _ := h.turn(s, "badresult")
	assert.Equal(t, KindTurnOutcomeUnknown, KindOf(err))
	assert.Equal(t, "the agent's response to the prompt did not decode", r.Message)
}

func TestStopSessionZeroAndTwice(t *testing.T) {
	h := newHarness(t)
	assert.NoError(t, h.a.StopSession(context.Background(), Session{}))
	s := h.start()
	h.stop(s)
	h.stop(s) // a second call does nothing
}
