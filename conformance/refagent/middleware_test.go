package refagent

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests below cover what the agent side's middleware (intercept) adds
// to the typed dispatch.

func TestMalformedCapabilitiesIsSentRaw(t *testing.T) {
	o := DefaultOptions()
	o.MalformedCapabilities = true
	c := startAgent(t, o)
	_, r := c.call("initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, r.Error)
	caps, _ := r.Result["agentCapabilities"].(map[string]any)
	assert.Equal(t, "yes", caps["loadSession"], r.raw)
}

func TestUnknownMethodCodeAnswersBeforeDecoding(t *testing.T) {
	o := DefaultOptions()
	o.UnknownMethodCode = -32603
	c := startAgent(t, o)
	for _, tc := range []struct {
		method string
		params any
	}{
		{"vendor/unknown", map[string]any{}},
		{"_vendor/unknown", map[string]any{}},
		// Not advertised, and params that would not decode: unknown wins.
		{"session/load", map[string]any{"sessionId": 7}},
	} {
		_, r := c.call(tc.method, tc.params)
		require.NotNil(t, r.Error, tc.method)
		assert.EqualValues(t, -32603, r.Error.Code, tc.method)
		assert.Equal(t, "method not found: "+tc.method, r.Error.Message)
	}
}

func TestBadParamsNameThePath(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	c.handshake()
	_, r := c.call("session/new", map[string]any{"cwd": 7, "mcpServers": []any{}})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code)
	var data struct{ Path string }
	require.NoError(t, json.Unmarshal(r.Error.Data, &data), r.raw)
	assert.Equal(t, "params.cwd", data.Path)
}

// A typed method's own -32601 (here asked for by a flag) keeps its
// message: only a method the agent lacks is rewritten.
func TestFailureWithMethodNotFoundCodeKeepsItsMessage(t *testing.T) {
	o := DefaultOptions()
	o.FailNewSession = -32601
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	_, r := c.call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32601, r.Error.Code)
	assert.Equal(t, "refagent: failing on request", r.Error.Message)
}
