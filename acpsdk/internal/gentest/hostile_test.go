package gentest

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
)

// Input real peers send that the generated codecs got wrong (issue #9).

// TestSDK3_TagNamingTheUntaggedBranch: the pinned schema lets the untagged
// branch of AuthMethod and McpServer carry the tag with the branch's title
// ("agent", "stdio"), and the Kotlin SDK writes it; it is that branch, not
// the Unknown variant, and the bytes are kept.
func TestSDK3_TagNamingTheUntaggedBranch(t *testing.T) {
	for _, in := range []string{
		`{"type":"agent","id":"a","name":"A"}`,
		`{"id":"a","type":"agent","name":"A","description":null}`,
	} {
		v, err := gen.UnmarshalAuthMethod([]byte(in))
		require.NoError(t, err)
		a, ok := v.(*gen.AuthMethodAgent)
		require.True(t, ok, "%s: got %T", in, v)
		require.Equal(t, gen.AuthMethodID("a"), a.ID)
		out, err := json.Marshal(a)
		require.NoError(t, err)
		require.Equal(t, in, string(out))
	}
	in := `{"type":"stdio","name":"fs","command":"/bin/mcp","args":["-v"],"env":[]}`
	v, err := gen.UnmarshalMcpServer([]byte(in))
	require.NoError(t, err)
	s, ok := v.(*gen.McpServerStdio)
	require.True(t, ok, "got %T", v)
	require.Equal(t, "/bin/mcp", s.Command)
	out, err := json.Marshal(s)
	require.NoError(t, err)
	require.Equal(t, in, string(out))

	// Through a parent, byte for byte.
	req := `{"cwd":"/w","mcpServers":[{"type":"stdio","name":"fs","command":"c","args":[],"env":[]},{"name":"b","command":"c","args":[],"env":[]}]}`
	r, out2 := roundTrip[gen.NewSessionRequest](t, req)
	require.Equal(t, req, out2)
	require.IsType(t, &gen.McpServerStdio{}, r.McpServers[0])
}

// TestSDK3_EmptyUnknownVariantDoesNotEncode: an Unknown variant without a
// raw object carrying the tag would encode to something that does not
// decode again (as {} did); encoding fails instead, naming the problem.
func TestSDK3_EmptyUnknownVariantDoesNotEncode(t *testing.T) {
	for name, v := range map[string]any{
		"ContentBlock":          &gen.ContentBlockUnknown{},
		"ContentBlock null":     &gen.ContentBlockUnknown{Raw: json.RawMessage(`null`)},
		"ContentBlock no tag":   &gen.ContentBlockUnknown{Raw: json.RawMessage(`{"url":"x"}`)},
		"SessionUpdate":         &gen.SessionUpdateUnknown{},
		"McpServer":             &gen.McpServerUnknown{},
		"in a list":             &gen.PromptRequest{SessionID: "s", Prompt: []gen.ContentBlock{&gen.ContentBlockUnknown{}}},
		"flattened":             &gen.SessionConfigOption{ID: "o", Name: "O", Type: &gen.SessionConfigOptionTypeUnknown{}},
		"flattened without tag": &gen.SessionConfigOption{ID: "o", Name: "O", Type: &gen.SessionConfigOptionTypeUnknown{Raw: json.RawMessage(`{"min":0}`)}},
	} {
		_, err := json.Marshal(v)
		require.ErrorIs(t, err, jsonx.ErrEncode, name)
		require.Contains(t, err.Error(), "unknown variant", name)
	}
	// A well-formed one still encodes verbatim.
	out, err := json.Marshal(&gen.ContentBlockUnknown{Raw: json.RawMessage(`{"type":"video","url":"x"}`)})
	require.NoError(t, err)
	require.Equal(t, `{"type":"video","url":"x"}`, string(out))
}

// TestSDK5_FlattenedUnionOwnersKeepOrderAndNulls: objects holding a
// flattened union keep explicit nulls and member order, like every other
// object type, and an unknown variant whose tag comes first re-encodes byte
// for byte.
func TestSDK5_FlattenedUnionOwnersKeepOrderAndNulls(t *testing.T) {
	for _, in := range []string{
		`{"id":"o","name":"O","description":null,"_meta":null,"type":"boolean","currentValue":true}`,
		`{"type":"boolean","currentValue":true,"name":"O","id":"o"}`,
		`{"currentValue":"a","id":"o","type":"select","name":"O","options":[{"value":"a","name":"A"}]}`,
		`{"type":"slider","id":"o","name":"O","min":0,"max":10}`,
		`{"id":"o","min":0,"type":"slider","name":"O"}`,
	} {
		_, out := roundTrip[gen.SessionConfigOption](t, in)
		require.Equal(t, in, out)
	}
	for _, in := range []string{
		`{"value":true,"type":"boolean","configId":"c","sessionId":"s","_meta":null}`,
		`{"sessionId":"s","configId":"c","value":"v","_meta":null}`,
	} {
		_, out := roundTrip[gen.SetSessionConfigOptionRequest](t, in)
		require.Equal(t, in, out)
	}
	in := `{"mode":"form","message":"m","_meta":null,"sessionId":"s","requestedSchema":{"type":"object","properties":{}}}`
	_, out := roundTrip[gen.CreateElicitationRequest](t, in)
	require.Equal(t, in, out)

	// A changed value is encoded from its fields again, canonically.
	o, _ := roundTrip[gen.SessionConfigOption](t, `{"type":"boolean","currentValue":true,"name":"O","id":"o"}`)
	o.Name = "P"
	b, err := json.Marshal(o)
	require.NoError(t, err)
	require.Equal(t, `{"id":"o","name":"P","type":"boolean","currentValue":true}`, string(b))
}

// TestSDK5_DoubleMembersRerenderAsFloat64: a member typed "double" is a
// float64 and re-renders in Go's shortest form (accepted, documented in
// package gen); the same number in _meta keeps its text.
func TestSDK5_DoubleMembersRerenderAsFloat64(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":1.0,"currency":"USD"}},"_meta":{"amount":1.0}}`
	_, out := roundTrip[gen.SessionNotification](t, in)
	require.Equal(t, `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":1,"currency":"USD"}},"_meta":{"amount":1.0}}`, out)
}
