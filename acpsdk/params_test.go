package acpsdk

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// within reports whether s's bytes lie inside b.
func within(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

// TestSDK10_DecodeParamsFromTheValidatedLine (issue #23): an ordered
// consumer decodes a request's params into the method's generated type
// straight from the line the connection validated: no second validation,
// no copy (the decoded strings share the line), as Inbound.Result decodes
// a result.
func TestSDK10_DecodeParamsFromTheValidatedLine(t *testing.T) {
	type decoded struct {
		kind   InboundKind
		shared bool
		text   string
		err    error
	}
	got := make(chan decoded, 4)
	consume := func(_ context.Context, in *Inbound) {
		switch in.Kind {
		case InboundNotification, InboundRequest:
		default:
			return
		}
		var d decoded
		d.kind = in.Kind
		switch in.Request.Method {
		case gen.MethodSessionUpdate:
			var n gen.SessionNotification
			d.err = in.Request.DecodeParams(&n)
			if chunk, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
				d.text = chunk.Content.(*gen.ContentBlockText).Text
				d.shared = within(string(n.SessionID), in.Request.Params) && within(d.text, in.Request.Params)
			}
		case gen.MethodSessionRequestPermission:
			var p gen.RequestPermissionRequest
			d.err = in.Request.DecodeParams(&p)
			d.text = string(p.ToolCall.ToolCallID)
			d.shared = within(d.text, in.Request.Params)
			in.Reply.Skip()
		}
		got <- d
	}
	_, p := newOrderedPeer(t, consume, nil)
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t9"},"options":[]}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}}`)
	require.Equal(t, decoded{kind: InboundNotification, shared: true, text: "hello"}, await(t, got))
	require.Equal(t, decoded{kind: InboundRequest, shared: true, text: "t9"}, await(t, got))
	bad := await(t, got)
	require.Error(t, bad.err)
	de, ok := errors.AsType[*gen.DecodeError](bad.err)
	require.True(t, ok, "%T", bad.err)
	require.Equal(t, "params.update.content", de.Path)
}

// TestDecodeParamsValidatesWhatTheConnectionDidNotRead: params a program
// set are validated and copied, and a destination that is not the method's
// params type is json.Unmarshal's.
func TestDecodeParamsValidatesWhatTheConnectionDidNotRead(t *testing.T) {
	r := &Request{Method: gen.MethodSessionUpdate, Params: []byte("{\"sessionId\":\"\xff\",\"update\":{\"sessionUpdate\":\"plan\",\"entries\":[]}}")}
	var n gen.SessionNotification
	require.Error(t, r.DecodeParams(&n), "not UTF-8")

	r.Params = []byte(`{"sessionId":"s2","update":{"sessionUpdate":"plan","entries":[]}}`)
	require.NoError(t, r.DecodeParams(&n))
	require.Equal(t, gen.SessionID("s2"), n.SessionID)
	require.False(t, within(string(n.SessionID), r.Params), "a private copy")

	var plain struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, r.DecodeParams(&plain))
	require.Equal(t, "s2", plain.SessionID)

	var missing gen.SessionNotification
	err := (&Request{Method: gen.MethodSessionUpdate}).DecodeParams(&missing)
	de, ok := errors.AsType[*gen.DecodeError](err)
	require.True(t, ok, "%T %v", err, err)
	require.Equal(t, "params.sessionId", de.Path, "absent params decode as {}")
}

// TestDecodeParamsCoversEveryStableMethod: every method of the stable
// surface has its params decoded trusted (the generated decoder covers the
// method table, so a schema bump keeps it whole).
func TestDecodeParamsCoversEveryStableMethod(t *testing.T) {
	for _, mi := range gen.Methods {
		if mi.NewParams == nil {
			continue
		}
		ok, _ := decodeTrustedParams([]byte(`{}`), mi.NewParams())
		require.True(t, ok, "%s is not decoded trusted", mi.Name)
	}
}

// TestDecodeParamsAllocatesOnlyTheValue (issue #23): trusted params decode
// in place, allocating only what the value holds (here the update and its
// content block), not a copy of the params nor a params value of its own.
func TestDecodeParamsAllocatesOnlyTheValue(t *testing.T) {
	line := []byte(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}`)
	r := &Request{Method: gen.MethodSessionUpdate, Params: line, validated: line}
	var n gen.SessionNotification
	allocs := testing.AllocsPerRun(100, func() {
		if err := r.DecodeParams(&n); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 2.0, allocs)
	require.True(t, within(string(n.SessionID), line), "shares the line")
}
