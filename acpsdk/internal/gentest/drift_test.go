package gentest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// Drift fixtures: how real runtimes answer, with fields and variants the
// pinned schema does not know. All decode and re-encode without loss.

func TestDrift_NewSessionResponseWithModels(t *testing.T) {
	in := `{"sessionId":"sess-1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"}]},"models":{"currentModelId":"sonnet","availableModels":[{"modelId":"sonnet","name":"Sonnet"}]}}`
	r, out := roundTrip[gen.NewSessionResponse](t, in)
	require.Equal(t, in, out)
	m, ok := r.Extra.Get("models")
	require.True(t, ok)
	require.JSONEq(t, `{"currentModelId":"sonnet","availableModels":[{"modelId":"sonnet","name":"Sonnet"}]}`, string(m))
}

func TestDrift_PromptResponseWithUsage(t *testing.T) {
	for _, in := range []string{
		`{"stopReason":"end_turn","usage":{"inputTokens":1200,"outputTokens":85,"cachedReadTokens":12345678901234567890}}`,
		`{"stopReason":"end_turn","usage":null}`,
	} {
		r, out := roundTrip[gen.PromptResponse](t, in)
		require.Equal(t, in, out)
		require.Equal(t, gen.StopReasonEndTurn, r.StopReason)
		_, ok := r.Extra.Get("usage")
		require.True(t, ok)
	}
}

func TestDrift_AuthMethodEnvVar(t *testing.T) {
	in := `{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{},"auth":{}},"authMethods":[{"type":"env_var","id":"openai","name":"OpenAI key","varName":"OPENAI_API_KEY"},{"id":"login","name":"Log in"}]}`
	r, out := roundTrip[gen.InitializeResponse](t, in)
	require.Equal(t, in, out)
	require.IsType(t, &gen.AuthMethodUnknown{}, r.AuthMethods[0])
	require.IsType(t, &gen.AuthMethodAgent{}, r.AuthMethods[1])
}

func TestDrift_ExtraCapabilityKeys(t *testing.T) {
	in := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false,"acp":true},"sessionCapabilities":{"list":{},"resume":{},"fork":{}},"auth":{}},"authMethods":[]}`
	r, out := roundTrip[gen.InitializeResponse](t, in)
	require.Equal(t, in, out)
	acp, ok := r.AgentCapabilities.McpCapabilities.Extra.Get("acp")
	require.True(t, ok)
	require.Equal(t, "true", string(acp))
	fork, ok := r.AgentCapabilities.SessionCapabilities.Extra.Get("fork")
	require.True(t, ok)
	require.Equal(t, "{}", string(fork))
	require.NotNil(t, r.AgentCapabilities.SessionCapabilities.List)
	require.NotNil(t, r.AgentCapabilities.SessionCapabilities.Resume)
	require.Nil(t, r.AgentCapabilities.SessionCapabilities.Close)
}

// TestDrift_VendorNotificationWithoutSessionID: a vendor session/update
// variant and a prompt-turn usage_update with cost.
func TestDrift_UsageUpdateWithCost(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}}}`
	n, out := roundTrip[gen.SessionNotification](t, in)
	require.Equal(t, in, out)
	u := n.Update.(*gen.SessionUpdateUsageUpdate)
	require.Equal(t, uint64(53000), u.Used)
	require.Equal(t, 0.045, u.Cost.Amount)
}
