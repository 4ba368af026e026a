package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/normalize"
)

// request is a request line the runtime sent, as the wire tap hands it.
func request(id, method string) adapter.WireEvent {
	return adapter.WireEvent{Kind: adapter.WireRecv, Line: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`)}
}

// PM-4 answers Qwen Code's craft/drainMidTurnQueue -32601: the text view
// says so once, as the runtime's quirk, and names an ACP method this
// client does not offer on its malformed line.
func TestPM4_VendorMethodWithoutPrefixIsAQuirkShownOnce(t *testing.T) {
	unimpl := adapter.Event{Type: adapter.EventMalformed, Message: normalize.MsgUnimplementedMethod}
	rt := newFake(fakeTurn{
		events: []adapter.Event{unimpl, unimpl, unimpl},
		result: adapter.TurnResult{SessionID: "sess-1", Outcome: adapter.EventTurnCompleted},
	})
	rt.wire = []adapter.WireEvent{
		request("7", "craft/drainMidTurnQueue"),
		{Kind: adapter.WireRecv, Line: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)},
		request("8", "session/request_permission"), // refused, not PM-4
		request("9", "craft/drainMidTurnQueue"),
		request("10", "fs/read_text_file"),
	}
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("hi"), h.stderr.String())
	out := h.stdout.String()
	assert.Equal(t, 1, strings.Count(out, "craft/drainMidTurnQueue"), out)
	assert.Contains(t, out, "quirk     the runtime called craft/drainMidTurnQueue, its own method without the \"_\" prefix ACP gives extensions")
	assert.Contains(t, out, "malformed the agent called a method this client does not implement: fs/read_text_file")
	assert.Equal(t, 1, strings.Count(out, "malformed"), "the quirk is not a broken line")
}

func TestVendorQuirk(t *testing.T) {
	assert.True(t, vendorQuirk("craft/drainMidTurnQueue"))
	assert.False(t, vendorQuirk("_qwen/drain"), "an extension method, as ACP names them")
	assert.False(t, vendorQuirk("fs/read_text_file"), "ACP's own")
}

// TestPM4_UnimplementedMethodIsReadByExactMemberNames: only a line the
// adapter takes for a request (an "id" and a "method", by those exact
// names) is answered -32601, so only its method may name PM-4's event.
func TestPM4_UnimplementedMethodIsReadByExactMemberNames(t *testing.T) {
	unimpl := adapter.Event{Type: adapter.EventMalformed, Message: normalize.MsgUnimplementedMethod}
	rt := newFake(fakeTurn{
		events: []adapter.Event{unimpl},
		result: adapter.TurnResult{SessionID: "sess-1", Outcome: adapter.EventTurnCompleted},
	})
	rt.wire = []adapter.WireEvent{
		{Kind: adapter.WireRecv, Line: []byte(`{"jsonrpc":"2.0","ID":7,"method":"terminal/create","params":{}}`)},
		{Kind: adapter.WireRecv, Line: []byte(`{"jsonrpc":"2.0","id":8,"METHOD":"terminal/output","params":{}}`)},
		request("9", "fs/read_text_file"),
	}
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("hi"), h.stderr.String())
	out := h.stdout.String()
	assert.Contains(t, out, "malformed the agent called a method this client does not implement: fs/read_text_file", out)
	assert.NotContains(t, out, "terminal/")
}
