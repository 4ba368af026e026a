package refagent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
)

// sessionIn creates a session in dir after initialize.
func (c *client) sessionIn(dir string) string {
	c.t.Helper()
	_, init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	require.Nil(c.t, init.Error)
	_, created := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	require.Nil(c.t, created.Error, created.raw)
	sid, _ := created.Result["sessionId"].(string)
	return sid
}

func selected(id string) map[string]any {
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}
}

func TestPrompt_WriteHappensOnlyWhenAllowed(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, DefaultOptions())
	sid := c.sessionIn(dir)
	var asked []string
	c.answer = func(method string, params json.RawMessage) (any, *acpsdk.Error) {
		var p struct {
			ToolCall struct{ Title, Kind string } `json:"toolCall"`
		}
		require.NoError(t, json.Unmarshal(params, &p))
		asked = append(asked, p.ToolCall.Kind+" "+p.ToolCall.Title)
		return defaultAnswer(method, params)
	}
	updates, _ := c.prompt(sid, "write")
	assert.Equal(t, []string{"edit Write refagent-note.txt"}, asked)
	assert.Equal(t, "failed", lastToolStatus(updates, "write-1"))
	assert.NoFileExists(t, filepath.Join(dir, WriteFile), "refused: nothing written")

	c.answer = func(string, json.RawMessage) (any, *acpsdk.Error) { return selected("allow"), nil }
	updates, _ = c.prompt(sid, "write")
	assert.Equal(t, "completed", lastToolStatus(updates, "write-1"))
	assert.Contains(t, texts(updates), "wrote refagent-note.txt")
	b, err := os.ReadFile(filepath.Join(dir, WriteFile))
	require.NoError(t, err)
	assert.Equal(t, "written by the reference agent\n", string(b))
}

func TestPrompt_PermissionForAToolKind(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	var kind string
	c.answer = func(method string, params json.RawMessage) (any, *acpsdk.Error) {
		var p struct {
			ToolCall struct{ Kind string } `json:"toolCall"`
		}
		require.NoError(t, json.Unmarshal(params, &p))
		kind = p.ToolCall.Kind
		return defaultAnswer(method, params)
	}
	c.prompt(sid, "permission=read")
	assert.Equal(t, "read", kind)
	_, err := ParseWords("permission=")
	assert.ErrorIs(t, err, ErrWord)
}

func TestPrompt_ErrorDataCarriesTheCause(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	_, r := c.prompt(sid, "error=-32000 error-data")
	require.NotNil(t, r.Error)
	assert.Equal(t, "authentication required", r.Error.Message)
	assert.JSONEq(t, `{"details":"-32000 Incorrect API key provided"}`, string(r.Error.Data))
	_, r = c.prompt(sid, "error=-32000")
	assert.Empty(t, r.Error.Data)
}

func TestAuthenticate_RequiredBeforeASession(t *testing.T) {
	o := DefaultOptions()
	o.AuthMethods, o.RequireAuth = []string{"api-key", "oauth"}, true
	c := startAgent(t, o)
	_, init := c.call("initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, init.Error)
	methods, _ := json.Marshal(init.Result["authMethods"])
	assert.JSONEq(t, `[{"id":"api-key","name":"Reference agent method api-key"},{"id":"oauth","name":"Reference agent method oauth"}]`, string(methods))

	_, r := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32000, r.Error.Code)
	assert.Equal(t, "authentication required: call authenticate before starting a session", r.Error.Message)

	_, r = c.call("authenticate", map[string]any{"methodId": "nope"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code)

	_, r = c.call("authenticate", map[string]any{"methodId": "oauth"})
	require.Nil(t, r.Error)
	_, r = c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	require.Nil(t, r.Error, r.raw)
}

func TestAuthenticate_FailsOnRequest(t *testing.T) {
	o := DefaultOptions()
	o.AuthMethods, o.FailAuthenticate = []string{"api-key"}, -32000
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	_, r := c.call("authenticate", map[string]any{"methodId": "api-key"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32000, r.Error.Code)
}

func TestPrompt_StopAtRefusalSendsNothingMore(t *testing.T) {
	o := DefaultOptions()
	o.StopAtRefusal = true
	c := startAgent(t, o)
	sid := c.handshake()
	updates, resp := c.prompt(sid, "write text")
	require.Nil(t, resp.Error)
	assert.Equal(t, "end_turn", resp.Result["stopReason"])
	require.NotEmpty(t, updates)
	assert.Equal(t, "session/request_permission", updates[len(updates)-1].kind(), "the refusal is the last thing it did")
	c.answer = func(string, json.RawMessage) (any, *acpsdk.Error) { return selected("allow"), nil }
	_, resp = c.prompt(sid, "permission text")
	assert.Equal(t, "end_turn", resp.Result["stopReason"])
}
