package adapter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The adapter reads the members of a protocol message by their exact
// names, as the generated decoders do (issue #23): a member whose name
// differs only in case is another member, never the one the rule reads.

func TestEV10_UpdateMemberNamesMatchExactly(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, `raw:{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"@sid@","UPDATE":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"upper"}}}}`)
	require.NoError(t, err)
	assert.NotContains(t, ev.messages(EventNotification), "upper", "UPDATE is not update")
	assert.Contains(t, ev.sequence(), wantUnparsable, "params without update are undecodable (EV-10)")
}

func TestEV9_SessionIDMemberNameMatchesExactly(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, `raw:{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"@sid@","SESSIONID":"other","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ours"}}}}`)
	require.NoError(t, err)
	assert.Contains(t, ev.messages(EventNotification), "ours", "the update names this session; SESSIONID is another member")
	assert.Empty(t, h.log.find(logForeignUpdate))
}

func TestPM1_PM2_PermissionOptionMemberNamesMatchExactly(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	res, err, ev := h.turn(s, `raw:{"jsonrpc":"2.0","id":77,"method":"session/request_permission","params":{"sessionId":"@sid@","toolCall":{"toolCallId":"t"},"options":[{"OPTIONID":"r","name":"no","KIND":"reject_once"}]}}`)
	require.Error(t, err)
	assert.Equal(t, EventTurnInputRequired, res.Outcome, "an option without optionId and kind is no refusing option (PM-2)")
	assert.Contains(t, ev.sequence(), wantNeeded)
	assert.NotContains(t, ev.sequence(), wantRefused)
}

func TestDI2_DI4_StopReasonMemberNameMatchesExactly(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	res, err, _ := h.turn(s, `result:{"STOPREASON":"end_turn"}`)
	require.Error(t, err)
	assert.Equal(t, KindTurnOutcomeUnknown, res.Kind, "a result without stopReason does not decode (DI-4)")
	assert.Equal(t, msgPromptUndecodable, res.Message)
}

func TestPM11_DI11_HookRequestMemberNamesMatchExactly(t *testing.T) {
	// A hook sees the members PM-1 reads, by their exact names; so does
	// DI-11's record of the refused tool call.
	params := []byte(`{"sessionId":"sid","toolCall":{"toolCallId":"t","title":"ours","kind":"edit"},"TOOLCALL":{"toolCallId":"x","title":"other","kind":"read"},` +
		`"options":[{"optionId":"a","name":"yes","kind":"allow_once"},{"OPTIONID":"b","name":"upper","KIND":"reject_once"}]}`)
	r, ok := decodePermissionRequest(params, "sid")
	require.True(t, ok)
	assert.Equal(t, PermissionRequest{
		SessionID: "sid", ToolCallID: "t", Title: "ours", ToolKind: "edit",
		Options: []PermissionOption{{ID: "a", Name: "yes", Kind: "allow_once"}},
	}, r)
	p := &pump{turn: &turnState{}}
	p.noteRefusal(params)
	assert.Equal(t, []string{"t"}, p.turn.refusedCalls)
}
