package gentest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// TestSDK4_DefaultOnErrorPromptCapabilities: a malformed promptCapabilities
// (x-deserialize-default-on-error) decodes to its schema default and the
// rest of the message survives.
func TestSDK4_DefaultOnErrorPromptCapabilities(t *testing.T) {
	var r gen.InitializeResponse
	require.NoError(t, r.UnmarshalJSON([]byte(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":"all of them","mcpCapabilities":{"http":true}}}`)))
	require.True(t, r.AgentCapabilities.LoadSession)
	require.Equal(t, gen.PromptCapabilities{}, r.AgentCapabilities.PromptCapabilities)
	require.True(t, r.AgentCapabilities.McpCapabilities.HTTP)

	// Inside it, each flag is lenient on its own.
	require.NoError(t, r.UnmarshalJSON([]byte(`{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"image":"yes","audio":true}}}`)))
	require.False(t, r.AgentCapabilities.PromptCapabilities.Image)
	require.True(t, r.AgentCapabilities.PromptCapabilities.Audio)

	// Optional pointer members fall back to nil.
	var c gen.ContentChunk
	require.NoError(t, c.UnmarshalJSON([]byte(`{"content":{"type":"text","text":"x"},"messageId":42,"_meta":[1]}`)))
	require.Nil(t, c.MessageID)
	require.Nil(t, c.Meta)
}

// TestSDK4_DefaultsWhenAbsent: schema defaults are applied to absent members.
func TestSDK4_DefaultsWhenAbsent(t *testing.T) {
	var r gen.InitializeResponse
	require.NoError(t, r.UnmarshalJSON([]byte(`{"protocolVersion":1}`)))
	require.NotNil(t, r.AuthMethods, "authMethods defaults to []")
	require.Empty(t, r.AuthMethods)
	require.Equal(t, gen.AgentCapabilities{}, r.AgentCapabilities)

	var s gen.ElicitationSchema
	require.NoError(t, s.UnmarshalJSON([]byte(`{}`)))
	require.Equal(t, gen.ElicitationSchemaTypeObject, s.Type)
	require.NotNil(t, s.Properties, "properties defaults to {}")
}

// TestSDK4_SkipInvalidAuthMethods: x-deserialize-skip-invalid-items drops
// a bad item and keeps the rest.
func TestSDK4_SkipInvalidAuthMethods(t *testing.T) {
	var r gen.InitializeResponse
	require.NoError(t, r.UnmarshalJSON([]byte(`{"protocolVersion":1,"authMethods":[{"id":"a","name":"Agent"},{"type":"terminal","name":"no id"},42,{"type":"terminal","id":"t","name":"Terminal","args":["login"]}]}`)))
	require.Len(t, r.AuthMethods, 2)
	require.Equal(t, &gen.AuthMethodAgent{ID: "a", Name: "Agent"}, r.AuthMethods[0])
	term, ok := r.AuthMethods[1].(*gen.AuthMethodTerminal)
	require.True(t, ok)
	require.Equal(t, []string{"login"}, term.Args)

	// Also on tool call content and plan entries.
	n, err := decodeNotification(`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"urgent","status":"pending"}]}}`)
	require.NoError(t, err)
	require.Len(t, n.Update.(*gen.SessionUpdatePlan).Entries, 1)
}

// TestSDK4_DefaultOnNullMcpServers: "mcpServers": null is empty.
func TestSDK4_DefaultOnNullMcpServers(t *testing.T) {
	var r gen.NewSessionRequest
	require.NoError(t, r.UnmarshalJSON([]byte(`{"cwd":"/w","mcpServers":null,"additionalDirectories":null}`)))
	require.NotNil(t, r.McpServers)
	require.Empty(t, r.McpServers)
	require.NotNil(t, r.AdditionalDirectories)
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	// Arrival order is kept (mcpServers came first).
	require.Equal(t, `{"cwd":"/w","mcpServers":[],"additionalDirectories":[]}`, string(out))

	// Without the keyword, null is not accepted for a required list.
	var p gen.PromptRequest
	err = p.UnmarshalJSON([]byte(`{"sessionId":"s","prompt":null}`))
	require.ErrorIs(t, err, gen.ErrType)
}

// TestSDK4_OptionalRule: absent, null and zero of optional members.
func TestSDK4_OptionalRule(t *testing.T) {
	var r gen.ReadTextFileRequest
	require.NoError(t, r.UnmarshalJSON([]byte(`{"sessionId":"s","path":"/f","line":0}`)))
	require.NotNil(t, r.Line)
	require.Equal(t, uint32(0), *r.Line)
	require.Nil(t, r.Limit)
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","path":"/f","line":0}`, string(out))

	require.NoError(t, r.UnmarshalJSON([]byte(`{"sessionId":"s","path":"/f","line":null}`)))
	require.Nil(t, r.Line)
}
