package gentest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/gen/v1unstable"
	"acpkit.dev/acpsdk/gen/v2"
	"acpkit.dev/acpsdk/gen/v2unstable"
)

// The constructs v1 unstable brought to the generator, decoded and
// re-encoded through the generated acpsdk/gen/v1unstable.

// TestSDK3_StateUpdateUnknownTagIsKnown: "unknown" is a known state of
// StateUpdate (StateUpdateUnknown); a state the schema does not know is
// the catch-all, StateUpdateOther, kept verbatim.
func TestSDK3_StateUpdateUnknownTagIsKnown(t *testing.T) {
	u, err := v1unstable.UnmarshalStateUpdate([]byte(`{"state":"unknown"}`))
	require.NoError(t, err)
	require.IsType(t, &v1unstable.StateUpdateUnknown{}, u)

	in := `{"state":"paused","since":3}`
	u, err = v1unstable.UnmarshalStateUpdate([]byte(in))
	require.NoError(t, err)
	require.IsType(t, &v1unstable.StateUpdateOther{}, u)
	out, err := v1unstable.StateUpdateOther(*u.(*v1unstable.StateUpdateOther)).MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
}

// TestSDK5_LenientStopReasonSelectsNone: IdleStateUpdate's stopReason is
// the tag of its flattened union and lenient: absent, null or not a string
// is the "none" branch, which re-encodes what it was given.
func TestSDK5_LenientStopReasonSelectsNone(t *testing.T) {
	for _, in := range []string{
		`{"state":"idle"}`,
		`{"state":"idle","stopReason":null}`,
		`{"state":"idle","stopReason":7}`,
	} {
		u, err := v1unstable.UnmarshalStateUpdate([]byte(in))
		require.NoError(t, err, in)
		idle, ok := u.(*v1unstable.StateUpdateIdle)
		require.True(t, ok, in)
		require.IsType(t, &v1unstable.IdleStateUpdateStopReasonNone{}, idle.StopReason, in)
		out, err := idle.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in, string(out), "re-encoded byte for byte")
	}
	u, err := v1unstable.UnmarshalStateUpdate([]byte(`{"state":"idle","stopReason":"end_turn"}`))
	require.NoError(t, err)
	require.IsType(t, &v1unstable.IdleStateUpdateStopReasonEndTurn{}, u.(*v1unstable.StateUpdateIdle).StopReason)
	u, err = v1unstable.UnmarshalStateUpdate([]byte(`{"state":"idle","stopReason":"_vendor"}`))
	require.NoError(t, err)
	require.IsType(t, &v1unstable.IdleStateUpdateStopReasonUnknown{}, u.(*v1unstable.StateUpdateIdle).StopReason)
}

// TestSDK5_IdleStateKeepsItsOrder: IdleStateUpdate, a variant whose
// members a flattened union (stopReason) shares, re-encodes byte for byte
// whichever order its tag, stop reason and members arrive in.
func TestSDK5_IdleStateKeepsItsOrder(t *testing.T) {
	for _, in := range []string{
		`{"stopReason":"end_turn","state":"idle"}`,
		`{"x":1,"state":"idle","stopReason":"end_turn"}`,
		`{"state":"idle","x":1,"stopReason":null}`,
	} {
		u, err := v1unstable.UnmarshalStateUpdate([]byte(in))
		require.NoError(t, err, in)
		out, err := u.(*v1unstable.StateUpdateIdle).MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in, string(out))
		// As a member's value (a subagent's state).
		var s v1unstable.SubagentUpdate
		msg := `{"sessionId":"s","state":` + in + `}`
		require.NoError(t, s.UnmarshalJSON([]byte(msg)))
		out, err = s.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, msg, string(out))
	}
}

// mcpClient handles mcp/message requests (the client's side of the name).
type mcpClient struct{ fakeV1UnstableClient }

func (mcpClient) MessageMcp(_ context.Context, p *v1unstable.MessageMcpRequest) (v1unstable.MessageMcpResponse, error) {
	return &v1unstable.MessageMcpResponseResult{Result: []byte(`{"echo":"` + p.Method + `"}`)}, nil
}

type fakeV1UnstableClient struct{}

func (fakeV1UnstableClient) SessionUpdate(context.Context, *v1unstable.SessionNotification) error {
	return nil
}

func (fakeV1UnstableClient) RequestPermission(context.Context, *v1unstable.RequestPermissionRequest) (*v1unstable.RequestPermissionResponse, error) {
	return nil, nil
}

// TestSDK6_WireNameOnTwoSides: mcp/message is a request the client handles
// (its result a union) and a notification the agent handles; the table
// has both, LookupMethodOf tells them apart, and the client's dispatcher
// returns the union's variant.
func TestSDK6_WireNameOnTwoSides(t *testing.T) {
	req, ok := v1unstable.LookupMethodOf(v1unstable.SideClient, v1unstable.MethodMcpMessage)
	require.True(t, ok)
	require.False(t, req.Notification)
	notif, ok := v1unstable.LookupMethodOf(v1unstable.SideAgent, v1unstable.MethodMcpMessage)
	require.True(t, ok)
	require.True(t, notif.Notification)
	require.IsType(t, &v1unstable.MessageMcpNotification{}, notif.NewParams())

	res, err := v1unstable.DispatchClient(context.Background(), mcpClient{}, v1unstable.MethodMcpMessage,
		[]byte(`{"serverId":"s","requestId":"1","method":"tools/list"}`))
	require.NoError(t, err)
	r, ok := res.(*v1unstable.MessageMcpResponseResult)
	require.True(t, ok)
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"result":{"echo":"tools/list"}}`, string(out))

	var rawResp v1unstable.MessageMcpResponse
	rawResp, err = v1unstable.UnmarshalMessageMcpResponse([]byte(`{"error":{"code":-32601,"message":"no"}}`))
	require.NoError(t, err)
	require.IsType(t, &v1unstable.MessageMcpResponseError{}, rawResp)
}

// successor handles both forms of proxy/successor.
type successor struct{ notified, called int }

func (s *successor) ProxySuccessor(context.Context, *v1unstable.ProxySuccessorRequest) (*v1unstable.ProxySuccessorResponse, error) {
	s.called++
	r := v1unstable.ProxySuccessorResponse(`{"ok":true}`)
	return &r, nil
}

func (s *successor) ProxySuccessorNotification(context.Context, *v1unstable.ProxySuccessorNotification) error {
	s.notified++
	return nil
}

// TestSDK6_RequestAndNotificationOfOneName: proxy/successor is both a
// request and a notification of the proxy side; DispatchProxy takes the
// request, DispatchProxyNotification the notification.
func TestSDK6_RequestAndNotificationOfOneName(t *testing.T) {
	s := &successor{}
	ctx := context.Background()
	params := []byte(`{"method":"session/update","params":{}}`)
	res, err := v1unstable.DispatchProxy(ctx, s, v1unstable.MethodProxySuccessor, params)
	require.NoError(t, err)
	require.Equal(t, `{"ok":true}`, string(*res.(*v1unstable.ProxySuccessorResponse)))
	require.NoError(t, v1unstable.DispatchProxyNotification(ctx, s, v1unstable.MethodProxySuccessor, params))
	require.Equal(t, 1, s.called)
	require.Equal(t, 1, s.notified)
	require.ErrorIs(t, v1unstable.DispatchProxyNotification(ctx, s, v1unstable.MethodProxyInitialize, params), v1unstable.ErrNotImplemented)

	// proxy/initialize's params are initialize's: a Go alias.
	var _ *v1unstable.InitializeRequest = &v1unstable.InitializeProxyRequest{}
}

// FuzzSDK3_V1UnstableStateUpdate: arbitrary bytes through the v1 unstable
// StateUpdate decoder (a tagged union whose idle variant holds a flattened
// union with a lenient tag) never panic; a failure is a *DecodeError; what
// decodes re-encodes to bytes that decode and re-encode the same.
func FuzzSDK3_V1UnstableStateUpdate(f *testing.F) {
	for _, s := range []string{
		`{"state":"running"}`,
		`{"state":"idle","stopReason":null,"usage":{"totalTokens":1,"inputTokens":1,"outputTokens":0}}`,
		`{"state":"idle","stopReason":"error","message":"boom"}`,
		`{"stopReason":4,"state":"idle","x":[1]}`,
		`{"state":"unknown"}`,
		`{"state":"zz","k":{}}`,
		`{"state":7}`, `null`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := v1unstable.UnmarshalStateUpdate(data)
		if err != nil {
			var de *v1unstable.DecodeError
			require.True(t, errors.As(err, &de), "%T %v", err, err)
			return
		}
		out, err := json.Marshal(u)
		require.NoError(t, err)
		again, err := v1unstable.UnmarshalStateUpdate(out)
		require.NoError(t, err, "%s", out)
		out2, err := json.Marshal(again)
		require.NoError(t, err)
		require.Equal(t, string(out), string(out2))
	})
}

// TestSDK1_NewResultDecodesEveryResult: every method table's NewResult is
// something a result decodes into and re-encodes from (json.Unmarshaler
// and json.Marshaler), in every surface: never a pointer to an interface.
// A union result (v1 unstable's mcp/message) is a *json.RawMessage, which
// the union's Unmarshal function decodes, as the typed call does.
func TestSDK1_NewResultDecodesEveryResult(t *testing.T) {
	check := func(surface, method string, newResult func() any) {
		if newResult == nil {
			return
		}
		v := newResult()
		rt := reflect.TypeOf(v)
		require.Equal(t, reflect.Pointer, rt.Kind(), "%s %s", surface, method)
		require.NotEqual(t, reflect.Interface, rt.Elem().Kind(), "%s %s: NewResult is a %s", surface, method, rt)
		require.Implements(t, (*json.Unmarshaler)(nil), v, "%s %s", surface, method)
		require.Implements(t, (*json.Marshaler)(nil), v, "%s %s", surface, method)
	}
	for _, m := range gen.Methods {
		check("gen", m.Name, m.NewResult)
	}
	for _, m := range v1unstable.Methods {
		check("v1unstable", m.Name, m.NewResult)
	}
	for _, m := range v2.Methods {
		check("v2", m.Name, m.NewResult)
	}
	for _, m := range v2unstable.Methods {
		check("v2unstable", m.Name, m.NewResult)
	}

	m, ok := v1unstable.LookupMethodOf(v1unstable.SideClient, v1unstable.MethodMcpMessage)
	require.True(t, ok)
	in := `{"result":{"content":[],"big":12345678901234567890}}`
	v := m.NewResult()
	require.NoError(t, v.(json.Unmarshaler).UnmarshalJSON([]byte(in)))
	out, err := v.(json.Marshaler).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, in, string(out))
	raw, ok := v.(*json.RawMessage)
	require.True(t, ok, "%T", v)
	r, err := v1unstable.UnmarshalMessageMcpResponse(*raw)
	require.NoError(t, err)
	require.IsType(t, &v1unstable.MessageMcpResponseResult{}, r)
}
