package gentest

import (
	"errors"
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
	// Known limitation: the outer tag is re-encoded first wherever it
	// arrived (the variant keeps no member layout of its own).
	var moved v2.UpdateSessionNotification
	require.NoError(t, moved.UnmarshalJSON([]byte(`{"sessionId":"s","update":{"state":"running","sessionUpdate":"state_update"}}`)))
	out, err := moved.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}`, string(out))

	var n v2.UpdateSessionNotification
	err = n.UnmarshalJSON([]byte(`{"sessionId":"s","update":{"sessionUpdate":"state_update"}}`))
	var de *v2.DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	require.ErrorIs(t, err, v2.ErrMissingField)

	// Built in Go, it encodes in schema order, the outer tag first.
	built := v2.UpdateSessionNotification{SessionID: "s", Update: &v2.SessionUpdateStateUpdate{State: &v2.StateUpdateRunning{}}}
	out, err = json.Marshal(&built)
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
