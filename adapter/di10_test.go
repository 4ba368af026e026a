package adapter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/normalize"
)

// DI-10: a runtime that answers a refused permission by stopping its turn
// with cancelled (codex-acp does) needs a person; a retry meets the same
// refusal.
func TestDI10_RefAgent_CancelledAfterRefusalNeedsAPerson(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref("--cancel-after-refusal"))
	r, err, ev := h.turn(s, "permission")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
	assert.Equal(t, EventTurnInputRequired, r.Outcome)
	const msg = "agent asked for a decision only a person can make: a permission this unattended run refused"
	assert.Equal(t, msg, r.Message)
	assert.Equal(t, []string{msg}, ev.messages(EventTurnInputRequired), "DI-9: one terminal event with the message")
	assert.Contains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
	warn := h.log.find(logHumanInput)
	require.Len(t, warn, 1, "DI-5's warning")
	assert.Equal(t, "WARN", warn[0].Level.String())
}

func TestDI10_RefAgent_EndTurnAfterRefusalCompletes(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	r, err, _ := h.turn(s, "permission")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome, "the runtime carried on without the tool")
}

func TestDI10_RefAgent_RefusalIsRecordedPerTurn(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	_, err, _ := h.turn(s, "permission")
	require.NoError(t, err)
	// The refusal was the previous turn's: this cancelled stop is DI-2's.
	r, err, _ := h.turn(s, "text stop=cancelled")
	assert.Equal(t, KindTurnFailed, KindOf(err))
	assert.Equal(t, "agent reported a cancelled stop reason without a cancellation on either side", r.Message)
	assert.Empty(t, h.log.find(logHumanInput))
}

func TestDI10_RefAgent_RequestedCancelAfterRefusalStaysCancelled(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref("--cancel-after-refusal"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := &events{}
	// The caller cancels once the refusal is reported: DI-1's override
	// holds, whatever the runtime's reason for its cancelled stop.
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "permission slow", OnEvent: func(e Event) {
		ev.on(e)
		if e.Message == normalize.MsgPermissionRefused {
			cancel()
		}
	}})
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.Equal(t, EventTurnCancelled, r.Outcome)
	assert.Empty(t, h.log.find(logHumanInput))
}
