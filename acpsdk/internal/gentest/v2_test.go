package gentest

import (
	"errors"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen/v2"
	"acpkit.dev/acpsdk/gen/v2unstable"
)

// TestSDK3_V2StateUpdateFlattenedIntoItsVariant: v2's session/update
// "state_update" variant carries the StateUpdate union flattened — one
// object with both tags — decoded by tag alone at both levels and
// re-encoded byte for byte (in canonical member order); unknown states
// and stop reasons are kept.
func TestSDK3_V2StateUpdateFlattenedIntoItsVariant(t *testing.T) {
	for _, tc := range []struct {
		in    string
		check func(t *testing.T, s v2.StateUpdate)
	}{
		{`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`, func(t *testing.T, s v2.StateUpdate) {
			require.IsType(t, &v2.StateUpdateRunning{}, s)
		}},
		{`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}`, func(t *testing.T, s v2.StateUpdate) {
			require.IsType(t, &v2.IdleStateUpdateStopReasonEndTurn{}, s.(*v2.StateUpdateIdle).StopReason)
		}},
		{`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":null}}`, func(t *testing.T, s v2.StateUpdate) {
			require.IsType(t, &v2.IdleStateUpdateStopReasonNone{}, s.(*v2.StateUpdateIdle).StopReason)
		}},
		{`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"_vendor","x":[1]}}`, func(t *testing.T, s v2.StateUpdate) {
			require.IsType(t, &v2.StateUpdateUnknown{}, s)
		}},
	} {
		var n v2.UpdateSessionNotification
		require.NoError(t, n.UnmarshalJSON([]byte(tc.in)), tc.in)
		su, ok := n.Update.(*v2.SessionUpdateStateUpdate)
		require.True(t, ok, "%T", n.Update)
		tc.check(t, su.State)
		out, err := n.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tc.in, string(out))
	}
	var n v2.UpdateSessionNotification
	err := n.UnmarshalJSON([]byte(`{"sessionId":"s","update":{"sessionUpdate":"state_update"}}`))
	var de *v2.DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	require.ErrorIs(t, err, v2.ErrMissingField)

	// Built in Go, it encodes in schema order, the outer tag first.
	built := v2.UpdateSessionNotification{SessionID: "s", Update: &v2.SessionUpdateStateUpdate{State: &v2.StateUpdateRunning{}}}
	out, err := json.Marshal(&built)
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`, string(out))
}

// nestedTagOrders are state updates whose two tags (sessionUpdate, and
// the flattened StateUpdate's state) and members arrive in other orders.
var nestedTagOrders = []string{
	`{"sessionId":"s","update":{"state":"running","sessionUpdate":"state_update"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"state_update","background":[],"state":"running"}}`,
	`{"sessionId":"s","update":{"background":[],"state":"running","sessionUpdate":"state_update"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"state_update","x":1,"state":"running"}}`,
	`{"sessionId":"s","update":{"stopReason":"end_turn","sessionUpdate":"state_update","state":"idle"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","x":2,"stopReason":"end_turn"}}`,
	`{"sessionId":"s","update":{"stopReason":null,"state":"idle","sessionUpdate":"state_update"}}`,
	`{"sessionId":"s","update":{"state":"zz","sessionUpdate":"state_update"}}`,
	`{"sessionId":"s","update":{"x":1,"sessionUpdate":"state_update","state":"zz"}}`,
}

// TestSDK5_NestedTagIsWrittenWhereItWasRead: v2's state_update carries
// two tags in one object; wherever they and the members arrive, the
// message re-encodes byte for byte, in v2 and v2 unstable. A value changed
// after decoding is encoded again in canonical order.
func TestSDK5_NestedTagIsWrittenWhereItWasRead(t *testing.T) {
	for _, in := range nestedTagOrders {
		var n v2.UpdateSessionNotification
		require.NoError(t, n.UnmarshalJSON([]byte(in)), in)
		out, err := n.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in, string(out), "v2")
		// The variant's own MarshalJSON too.
		out, err = n.Update.(*v2.SessionUpdateStateUpdate).MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in[strings.Index(in, `"update":`)+len(`"update":`):len(in)-1], string(out), "v2 variant")

		var u v2unstable.UpdateSessionNotification
		require.NoError(t, u.UnmarshalJSON([]byte(in)), in)
		out, err = u.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in, string(out), "v2 unstable")
	}

	var n v2.UpdateSessionNotification
	require.NoError(t, n.UnmarshalJSON([]byte(`{"sessionId":"s","update":{"background":[],"state":"running","sessionUpdate":"state_update"}}`)))
	n.Update.(*v2.SessionUpdateStateUpdate).State.(*v2.StateUpdateRunning).Background = nil
	out, err := n.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`, string(out))
}

// TestSDK3_V2UnstableStateUpdateAsMember: in v2 unstable StateUpdate is
// also a member's type (session/status's state): there it is a whole
// object of its own, while session/update still carries it flattened.
func TestSDK3_V2UnstableStateUpdateAsMember(t *testing.T) {
	in := `{"status":"open","state":{"state":"idle","stopReason":"cancelled"}}`
	var r v2unstable.SessionStatusResponse
	require.NoError(t, r.UnmarshalJSON([]byte(in)))
	idle, ok := r.State.(*v2unstable.StateUpdateIdle)
	require.True(t, ok, "%T", r.State)
	require.IsType(t, &v2unstable.IdleStateUpdateStopReasonCancelled{}, idle.StopReason)
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, in, string(out))

	s, err := v2unstable.UnmarshalStateUpdate([]byte(`{"state":"requires_action","x":1}`))
	require.NoError(t, err)
	require.IsType(t, &v2unstable.StateUpdateRequiresAction{}, s)

	var n v2unstable.UpdateSessionNotification
	require.NoError(t, n.UnmarshalJSON([]byte(`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`)))
	require.IsType(t, &v2unstable.StateUpdateRunning{}, n.Update.(*v2unstable.SessionUpdateStateUpdate).State)

	// As a whole object too, the state and the stop reason keep their place.
	for _, in := range []string{
		`{"status":"open","state":{"stopReason":"cancelled","state":"idle"}}`,
		`{"status":"open","state":{"x":1,"state":"idle","stopReason":null}}`,
	} {
		var r v2unstable.SessionStatusResponse
		require.NoError(t, r.UnmarshalJSON([]byte(in)))
		out, err := r.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, in, string(out))
	}
}

// FuzzSDK3_V2SessionUpdate: arbitrary session/update params through the
// v2 decoder (a union flattened into a variant, two tags in one object)
// never panic; a failure is a *DecodeError; what decodes re-encodes to
// bytes that decode and re-encode the same.
func FuzzSDK3_V2SessionUpdate(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`,
		`{"sessionId":"s","update":{"state":"idle","sessionUpdate":"state_update","stopReason":null,"k":[]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"zz"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"state_update"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`,
		`null`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var n v2.UpdateSessionNotification
		if err := n.UnmarshalJSON(data); err != nil {
			var de *v2.DecodeError
			require.True(t, errors.As(err, &de), "%T %v", err, err)
			return
		}
		out, err := n.MarshalJSON()
		require.NoError(t, err)
		var again v2.UpdateSessionNotification
		require.NoError(t, again.UnmarshalJSON(out), "%s", out)
		out2, err := again.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(out), string(out2))
	})
}
