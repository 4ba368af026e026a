package adapter

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCFG1_RegistersUnderKindString(t *testing.T) {
	assert.Equal(t, "agent-client-protocol", KindName)
	assert.Equal(t, KindName, Registered().Kind)
}

func TestCFG4_ReadsTheGenericAgentFields(t *testing.T) {
	c := AgentConfig{Kind: KindName, Command: "agent --acp", ReadTimeoutMS: 1500, StopGraceMS: 2500, TurnTimeoutMS: 1, StallTimeoutMS: 1}
	assert.Equal(t, 1500*time.Millisecond, c.ReadTimeout())
	assert.Equal(t, 2500*time.Millisecond, c.StopGrace())
	// Turn and stall timeouts are the orchestrator's (context cancellation):
	// they change none of the adapter's own bounds.
	c.TurnTimeoutMS, c.StallTimeoutMS = 0, 0
	assert.Equal(t, 1500*time.Millisecond, c.ReadTimeout())
	assert.Equal(t, 2500*time.Millisecond, c.StopGrace())
}

func TestCFG5_ReadTimeoutFallsBackTo30s(t *testing.T) {
	for ms, want := range map[int]time.Duration{0: 30 * time.Second, -1: 30 * time.Second, 1: time.Millisecond, 5000: 5 * time.Second} {
		assert.Equal(t, want, AgentConfig{ReadTimeoutMS: ms}.ReadTimeout(), "read_timeout_ms=%d", ms)
	}
}

func TestCFG6_NonPositiveStopGraceIs5s(t *testing.T) {
	for ms, want := range map[int]time.Duration{0: 5 * time.Second, -100: 5 * time.Second, 1: time.Millisecond, 7000: 7 * time.Second} {
		assert.Equal(t, want, AgentConfig{StopGraceMS: ms}.StopGrace(), "stop_grace_ms=%d", ms)
	}
}

func TestCFG7_OnlyMCPConfigIsRecognisedAndNothingIsKept(t *testing.T) {
	block := map[string]any{"mcp_config": "./mcp-servers.json", "unknown": 12, "nested": map[string]any{"a": 1}}
	assert.Empty(t, ValidateExtension(block))
	assert.Equal(t, map[string]any{"mcp_config": "./mcp-servers.json", "unknown": 12, "nested": map[string]any{"a": 1}}, block, "the block is not modified")
	// The constructor keeps no value from the block: the per-session MCP
	// path arrives in StartParams, so two adapters built from different
	// blocks behave the same.
	_, err := New(block)
	require.NoError(t, err)
}

func TestCFG8_EffortKeyHasNoCheck(t *testing.T) {
	assert.Empty(t, ValidateExtension(map[string]any{"effort": "high", "reasoning_effort": 3}))
	assert.False(t, Registered().ForwardsEffort)
}

func TestCFG9_RegistrationMetadata(t *testing.T) {
	r := Registered()
	assert.True(t, r.RequiresCommand)
	assert.Equal(t, "translated", r.MCPInjection)
	assert.Equal(t, "turn_end", r.UsageArrival)
	assert.Equal(t, "per_model", r.UsageAttribution)
	assert.Equal(t, "none", r.RemoteUsageArrival)
	assert.Equal(t, "none", r.RemoteUsageAttribution)
	assert.Empty(t, r.CredentialEnv)
}

func TestVAL1_CheckIsPureAndRepeatable(t *testing.T) {
	assert.Empty(t, ValidateExtension(nil))
	assert.Empty(t, ValidateExtension(map[string]any{}))
	bad := map[string]any{"mcp_config": 7}
	first := ValidateExtension(bad)
	// Startup and every reload run the same check with the same result.
	for range 3 {
		assert.Equal(t, first, ValidateExtension(bad))
	}
}

func TestVAL2_MCPConfigWrongType(t *testing.T) {
	cases := []struct {
		value any
		typ   string
	}{
		{nil, "null"},
		{true, "bool"},
		{42, "int"},
		{int64(42), "int"},
		{uint64(42), "int"},
		{4.2, "float"},
		{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), "timestamp"},
		{[]any{"a.json"}, "sequence"},
		{map[string]any{"path": "a.json"}, "mapping"},
		{map[any]any{"path": "a.json"}, "mapping"},
		{struct{}{}, "struct {}"},
	}
	for _, c := range cases {
		got := ValidateExtension(map[string]any{"mcp_config": c.value})
		require.Len(t, got, 1, "%#v", c.value)
		assert.Equal(t, Finding{
			ID:       "agent-client-protocol.mcp_config.wrong_type",
			Severity: "error",
			Message:  "agent-client-protocol.mcp_config: expected a string, got " + c.typ,
		}, got[0])
	}
	assert.Empty(t, ValidateExtension(map[string]any{"mcp_config": ""}), "an empty string is a string")
}

func TestVAL3_ConstructorFailsWithTheValidateMessage(t *testing.T) {
	for _, v := range []any{nil, 3, []any{}, map[string]any{}} {
		block := map[string]any{"mcp_config": v}
		findings := ValidateExtension(block)
		require.Len(t, findings, 1)
		a, err := New(block)
		assert.Nil(t, a)
		require.Error(t, err)
		assert.Equal(t, findings[0].Message, err.Error())
	}
}

func TestVAL4_NoPostureCheckExists(t *testing.T) {
	for _, key := range []string{"posture", "approval", "approval_policy", "interactive", "trust"} {
		assert.Empty(t, ValidateExtension(map[string]any{key: "interactive"}), key)
	}
}

// A workflow whose agent-client-protocol block sets mcp_config to a list
// fails validation, and the constructor reports the same text.
func ExampleValidateExtension() {
	block := map[string]any{"mcp_config": []any{"a.json", "b.json"}}
	for _, f := range ValidateExtension(block) {
		fmt.Println(f.Severity, f.ID)
		fmt.Println(f.Message)
	}
	_, err := New(block)
	fmt.Println(err)
	// Output:
	// error agent-client-protocol.mcp_config.wrong_type
	// agent-client-protocol.mcp_config: expected a string, got sequence
	// agent-client-protocol.mcp_config: expected a string, got sequence
}

// The read timeout and stop grace fall back to their defaults when the
// workflow leaves them unset.
func ExampleAgentConfig_ReadTimeout() {
	c := AgentConfig{Command: "gemini --acp", StopGraceMS: 2000}
	fmt.Println(c.ReadTimeout(), c.StopGrace())
	// Output: 30s 2s
}
