package refagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

func TestInitialize_DefaultsAndCapabilityFlags(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	_, r := c.call("initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, r.Error)
	assert.EqualValues(t, 1, r.Result["protocolVersion"])
	assert.Equal(t, map[string]any{"name": "acpkit-refagent", "version": "1.0.0"}, r.Result["agentInfo"])
	caps := r.Result["agentCapabilities"].(map[string]any)
	assert.Equal(t, false, caps["loadSession"])
	assert.Equal(t, map[string]any{}, caps["sessionCapabilities"])

	o := DefaultOptions()
	o.LoadSession, o.Resume, o.Close, o.Delete, o.MCPHTTP, o.NoAgentInfo = true, true, true, true, true, true
	o.ProtocolVersion = 2
	c = startAgent(t, o)
	_, r = c.call("initialize", map[string]any{"protocolVersion": 1})
	assert.EqualValues(t, 2, r.Result["protocolVersion"])
	assert.NotContains(t, r.Result, "agentInfo")
	caps = r.Result["agentCapabilities"].(map[string]any)
	assert.Equal(t, true, caps["loadSession"])
	assert.Equal(t, map[string]any{"resume": map[string]any{}, "close": map[string]any{}, "delete": map[string]any{}}, caps["sessionCapabilities"])
	assert.Equal(t, true, caps["mcpCapabilities"].(map[string]any)["http"])
}

func TestInitialize_FailsOnRequest(t *testing.T) {
	o := DefaultOptions()
	o.FailInitialize = -32000
	c := startAgent(t, o)
	_, r := c.call("initialize", map[string]any{"protocolVersion": 1})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32000, r.Error.Code)
	assert.Equal(t, "authentication required", r.Error.Message)
}

func TestNewSession_FailsWithAuthRequired(t *testing.T) {
	o := DefaultOptions()
	o.FailNewSession = -32000
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	_, r := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32000, r.Error.Code)
}

func TestPrompt_DefaultStreamsTwoMessagesInChunks(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	updates, r := c.prompt(sid, "hi there")
	require.Nil(t, r.Error)
	assert.Equal(t, "end_turn", r.Result["stopReason"])
	var texts, ids []string
	for _, u := range updates {
		require.Equal(t, "agent_message_chunk", u.kind())
		assert.Equal(t, sid, u.Params.SessionID)
		texts = append(texts, u.text())
		ids = append(ids, u.Params.Update["messageId"].(string))
	}
	assert.Equal(t, []string{"Hello", ", ", "from the reference agent.", "You said: ", "hi there"}, texts)
	assert.Equal(t, []string{"sess-1-t1-m1", "sess-1-t1-m1", "sess-1-t1-m1", "sess-1-t1-m2", "sess-1-t1-m2"}, ids)
}

func TestPrompt_FullScriptOrderAndToolLifecycles(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	updates, r := c.prompt(sid, "full")
	require.Nil(t, r.Error)
	assert.Equal(t, []string{
		"agent_thought_chunk", "plan",
		"tool_call", "tool_call_update", "tool_call_update",
		"tool_call", "tool_call_update", "tool_call_update",
		"tool_call", "tool_call_update", "tool_call_update",
		"agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
	}, kinds(updates))
	statuses := map[string][]string{}
	kindOf := map[string]string{}
	for _, u := range updates {
		if id, ok := u.Params.Update["toolCallId"].(string); ok {
			statuses[id] = append(statuses[id], u.Params.Update["status"].(string))
			if k, ok := u.Params.Update["kind"].(string); ok {
				kindOf[id] = k
			}
		}
	}
	assert.Equal(t, []string{"pending", "in_progress", "completed"}, statuses["read-1"])
	assert.Equal(t, []string{"pending", "in_progress", "completed"}, statuses["edit-1"])
	assert.Equal(t, []string{"pending", "in_progress", "failed"}, statuses["exec-1"])
	assert.Equal(t, map[string]string{"read-1": "read", "edit-1": "edit", "exec-1": "execute"}, kindOf)
}

func TestPrompt_StopReasonWordsIncludingUnknown(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	for _, reason := range []string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "paused"} {
		_, r := c.prompt(sid, "stop="+reason)
		assert.Equal(t, reason, r.Result["stopReason"])
	}
}

func TestPrompt_PermissionRefusableAndAllowOnly(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	var offered [][]string
	c.answer = func(method string, params json.RawMessage) (any, *acpsdk.Error) {
		var p struct {
			Options []struct{ Kind string } `json:"options"`
		}
		require.NoError(t, json.Unmarshal(params, &p))
		var ks []string
		for _, o := range p.Options {
			ks = append(ks, o.Kind)
		}
		offered = append(offered, ks)
		return defaultAnswer(method, params)
	}
	updates, _ := c.prompt(sid, "permission")
	assert.Contains(t, kinds(updates), "session/request_permission")
	assert.Contains(t, texts(updates), "permission outcome: selected reject")
	assert.Equal(t, "failed", lastToolStatus(updates, "perm-1"), "a refused tool call fails")

	updates, _ = c.prompt(sid, "permission-allow-only")
	assert.Contains(t, texts(updates), "permission outcome: cancelled")
	assert.Equal(t, [][]string{{"allow_once", "reject_once"}, {"allow_once", "allow_always"}}, offered)

	c.answer = func(string, json.RawMessage) (any, *acpsdk.Error) {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}, nil
	}
	updates, _ = c.prompt(sid, "permission")
	assert.Equal(t, "completed", lastToolStatus(updates, "perm-1"))
}

func TestPrompt_CancelAfterRefusalStopsWithCancelled(t *testing.T) {
	o := DefaultOptions()
	o.CancelAfterRefusal = true
	c := startAgent(t, o)
	sid := c.handshake()
	_, r := c.prompt(sid, "permission")
	assert.Equal(t, "cancelled", r.Result["stopReason"], "a refused permission stops the turn")

	c.answer = func(string, json.RawMessage) (any, *acpsdk.Error) {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}, nil
	}
	_, r = c.prompt(sid, "permission")
	assert.Equal(t, "end_turn", r.Result["stopReason"], "an allowed one does not")
	_, r = c.prompt(sid, "text")
	assert.Equal(t, "end_turn", r.Result["stopReason"], "nor does a turn without a permission request")
}

func texts(ms []msg) []string {
	var out []string
	for _, m := range ms {
		if t := m.text(); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func lastToolStatus(ms []msg, id string) string {
	s := ""
	for _, m := range ms {
		if m.Params.Update["toolCallId"] == id {
			s, _ = m.Params.Update["status"].(string)
		}
	}
	return s
}

func TestPrompt_ElicitationAndUnknownClientMethod(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	updates, r := c.prompt(sid, "elicit call-unknown")
	require.Nil(t, r.Error)
	assert.Equal(t, []string{"elicitation/create", UnknownClientMethod}, requests(updates))
	joined := strings.Join(texts(updates), "|")
	assert.Contains(t, joined, "elicitation failed: error -32601")
	assert.Contains(t, joined, "Calling an unknown client method: error -32601")
}

func requests(ms []msg) []string {
	var out []string
	for _, m := range ms {
		if m.Method != "" && m.ID != nil {
			out = append(out, m.Method)
		}
	}
	return out
}

func TestPrompt_Misbehaviours(t *testing.T) {
	o := DefaultOptions()
	o.OversizeBytes = 4096
	c := startAgent(t, o)
	sid := c.handshake()
	updates, r := c.prompt(sid, "garbage oversize foreign unknown-update image usage")
	require.Nil(t, r.Error)
	assert.Equal(t, "refagent: this line is not JSON", updates[0].raw)
	assert.GreaterOrEqual(t, len(updates[1].raw), 4096, "the oversize line")
	assert.Equal(t, ForeignSessionID, updates[2].Params.SessionID)
	assert.Equal(t, "refagent_custom_update", updates[3].kind())
	assert.Equal(t, "image", updates[4].Params.Update["content"].(map[string]any)["type"])
	assert.Equal(t, "usage_update", updates[len(updates)-1].kind())
	assert.Equal(t, map[string]any{"quota": map[string]any{"token_count": map[string]any{"input_tokens": float64(120), "output_tokens": float64(34)}}}, r.Result["_meta"])
}

func TestPrompt_AfterAndLateUpdatesFollowTheResponse(t *testing.T) {
	o := DefaultOptions()
	o.LateUpdates = true
	c := startAgent(t, o)
	sid := c.handshake()
	before, r := c.prompt(sid, "after")
	require.Nil(t, r.Error)
	assert.Equal(t, []string{"Hello", ", ", "from the reference agent.", "You said: "}, texts(before))
	late, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, "after", late.text(), "the last chunk comes after the response")
	info, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, "session_info_update", info.kind())
}

func TestPrompt_SlowTurnHonoursCancel(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	id := c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "slow"}}})
	first, ok := c.next()
	require.True(t, ok)
	require.Equal(t, "agent_message_chunk", first.kind())
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	_, r := c.until(id)
	assert.Equal(t, "cancelled", r.Result["stopReason"])
}

func TestPrompt_SlowTurnIgnoringCancelRunsOut(t *testing.T) {
	o := DefaultOptions()
	o.SlowFor = 50 * time.Millisecond // the bound the turn runs to
	c := startAgent(t, o)
	sid := c.handshake()
	id := c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "slow-ignore-cancel"}}})
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	_, r := c.until(id)
	assert.Equal(t, "end_turn", r.Result["stopReason"])
}

func TestPrompt_ExitWordExitsMidTurn(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "exit=7"}}})
	first, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, "agent_message_chunk", first.kind(), "at least one update before exiting")
	assert.Equal(t, 7, <-c.exits)
}

func TestPrompt_UnknownSessionAndErrorWords(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	_, r := c.prompt("nope", "hi")
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32002, r.Error.Code)
	_, r = c.prompt(sid, "error=503")
	require.NotNil(t, r.Error)
	assert.EqualValues(t, 503, r.Error.Code)
}

func TestLoadReplaysAndResumeDoesNotAcrossProcesses(t *testing.T) {
	o := DefaultOptions()
	o.LoadSession, o.Resume, o.StateDir = true, true, t.TempDir()
	o.RecordMCP = filepath.Join(t.TempDir(), "mcp.jsonl")
	c := startAgent(t, o)
	sid := c.handshake()
	c.prompt(sid, "first")
	c.prompt(sid, "second")
	c.close()

	// A second agent over the same state directory, as after a restart.
	c = startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	servers := []any{map[string]any{"name": "tools", "command": "/bin/tool", "args": []any{}, "env": []any{}}}
	replay, r := c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/work", "mcpServers": servers})
	require.Nil(t, r.Error, r.raw)
	assert.Equal(t, []string{"user_message_chunk", "agent_message_chunk", "user_message_chunk", "agent_message_chunk"}, kinds(replay))
	assert.Equal(t, "first", replay[0].text())
	assert.Equal(t, "second", replay[2].text())

	none, r := c.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/work"})
	require.Nil(t, r.Error)
	assert.Empty(t, none, "resume does not replay")

	_, r = c.call("session/load", map[string]any{"sessionId": "sess-99", "cwd": "/work", "mcpServers": []any{}})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32002, r.Error.Code)

	b, err := os.ReadFile(o.RecordMCP)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 3, "session/new, session/load, session/resume")
	var rec Record
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &rec))
	assert.Equal(t, "session/load", rec.Method)
	assert.Equal(t, sid, rec.SessionID)
	assert.JSONEq(t, `[{"name":"tools","command":"/bin/tool","args":[],"env":[]}]`, string(rec.MCPServers))
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &rec))
	assert.Equal(t, "null", string(rec.MCPServers), "resume without mcpServers is recorded as null")
}

func TestLoadReplayAfterResponse(t *testing.T) {
	o := DefaultOptions()
	o.LoadSession, o.LoadReplayAfterResponse = true, true
	c := startAgent(t, o)
	sid := c.handshake()
	c.prompt(sid, "hello")
	before, r := c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/w", "mcpServers": []any{}})
	require.Nil(t, r.Error)
	assert.Empty(t, before)
	m, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, "user_message_chunk", m.kind())
}

func TestCloseAndDelete(t *testing.T) {
	o := DefaultOptions()
	o.Close, o.Delete, o.StateDir = true, true, t.TempDir()
	c := startAgent(t, o)
	sid := c.handshake()
	_, r := c.call("session/close", map[string]any{"sessionId": sid})
	assert.Nil(t, r.Error)
	_, r = c.call("session/delete", map[string]any{"sessionId": sid})
	assert.Nil(t, r.Error)
	assert.NoFileExists(t, filepath.Join(o.StateDir, sid+".json"))
	_, r = c.call("session/delete", map[string]any{"sessionId": "never-existed"})
	assert.Nil(t, r.Error, "deleting an unknown id succeeds")
	_, r = c.call("session/close", map[string]any{"sessionId": "never-existed"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32002, r.Error.Code)
}

func TestUnadvertisedMethodsAreUnknown(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	for _, m := range []string{"session/load", "session/resume", "session/close", "session/delete", "_vendor/x"} {
		_, r := c.call(m, map[string]any{"sessionId": "s", "cwd": "/w"})
		require.NotNil(t, r.Error, m)
		assert.EqualValues(t, -32601, r.Error.Code, m)
	}
}

func TestChattySendsNotificationsAroundSessionNew(t *testing.T) {
	o := DefaultOptions()
	o.Chatty = true
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	before, r := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	require.Nil(t, r.Error)
	require.Len(t, before, 1)
	assert.Equal(t, "_refagent/status", before[0].Method)
	assert.Empty(t, before[0].Params.SessionID)
	m, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, "available_commands_update", m.kind())
}

func TestBadInputAnswers(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	c.write("{not json")
	m, _ := c.next()
	require.NotNil(t, m.Error)
	assert.EqualValues(t, -32700, m.Error.Code)
	assert.Equal(t, "null", string(m.ID))
	c.write("[1]")
	m, _ = c.next()
	assert.EqualValues(t, -32600, m.Error.Code)
	_, r := c.call("initialize", map[string]any{})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code)
	c.notify("_vendor/unknown", map[string]any{})
	_, r = c.call("initialize", map[string]any{"protocolVersion": 1})
	assert.Nil(t, r.Error, "an unknown notification is ignored")
}

func TestDieOnGarbageAndAnswerNotifications(t *testing.T) {
	o := DefaultOptions()
	o.DieOnGarbage, o.AnswerNotifications = true, true
	c := startAgent(t, o)
	c.notify("_vendor/unknown", map[string]any{})
	m, _ := c.next()
	require.NotNil(t, m.Error, "the notification is answered, wrongly")
	c.write("garbage")
	assert.Equal(t, 3, <-c.exits)
}

func TestPrompt_MalformedUpdatesForClientTests(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	updates, r := c.prompt(sid, "malformed-update null-id-update tool-name-wrong-type")
	require.Nil(t, r.Error)
	require.GreaterOrEqual(t, len(updates), 4)
	assert.Equal(t, "tool_call", updates[0].kind())
	assert.NotContains(t, updates[0].Params.Update, "toolCallId")
	assert.Equal(t, "null", string(updates[1].ID), "sent with a null id")
	assert.Equal(t, "session/update", updates[1].Method)
	assert.Equal(t, float64(42), updates[2].Params.Update["name"])
	assert.Equal(t, "completed", updates[3].Params.Update["status"])
}

// TestPrompt_ScriptedUpdatesConformToTheSchema: every update the
// well-behaved words produce decodes with the SDK's generated types into a
// known variant.
func TestPrompt_ScriptedUpdatesConformToTheSchema(t *testing.T) {
	o := DefaultOptions()
	o.LoadSession, o.Chatty, o.SlowFor = true, true, 200*time.Millisecond
	c := startAgent(t, o)
	sid := c.handshake()
	updates, r := c.prompt(sid, "full permission elicit call-unknown image usage after slow-ignore-cancel")
	require.Nil(t, r.Error)
	replay, _ := c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/w", "mcpServers": []any{}})
	n := 0
	for _, m := range append(updates, replay...) {
		if m.Method != gen.MethodSessionUpdate {
			continue
		}
		var sn gen.SessionNotification
		require.NoError(t, sn.UnmarshalJSON(m.RawParams), m.raw)
		_, unknown := sn.Update.(*gen.SessionUpdateUnknown)
		assert.False(t, unknown, m.raw)
		n++
	}
	assert.Greater(t, n, 20)
}

// TestAfterLines_NoDeadlockWhenTheWriteQueueIsFull: lines written after a
// response while the outgoing queue is full must not block the writer's
// tap (a one-slot queue makes every multi-line write wait on the writer).
func TestAfterLines_NoDeadlockWhenTheWriteQueueIsFull(t *testing.T) {
	o := DefaultOptions()
	o.LoadSession, o.LoadReplayAfterResponse, o.writeQueue = true, true, 1
	c := startAgent(t, o)
	sid := c.handshake()
	for _, text := range []string{"one", "two", "three"} {
		c.prompt(sid, text)
	}
	_, r := c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/w", "mcpServers": []any{}})
	require.Nil(t, r.Error)
	var replay []string
	for len(replay) < 6 {
		m, ok := c.next()
		require.True(t, ok)
		replay = append(replay, m.kind())
	}
	assert.Equal(t, []string{"user_message_chunk", "agent_message_chunk", "user_message_chunk", "agent_message_chunk", "user_message_chunk", "agent_message_chunk"}, replay)
}

func TestAuthenticate_AdvertisedMethodsAndRequireAuth(t *testing.T) {
	o := DefaultOptions()
	o.AuthMethods, o.RequireAuth = []string{"key", "oauth"}, true
	c := startAgent(t, o)
	_, r := c.call("initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, r.Error)
	assert.Equal(t, []any{
		map[string]any{"id": "key", "name": "Reference agent method key"},
		map[string]any{"id": "oauth", "name": "Reference agent method oauth"},
	}, r.Result["authMethods"])
	newSession := map[string]any{"cwd": "/w", "mcpServers": []any{}}
	_, r = c.call("session/new", newSession)
	require.NotNil(t, r.Error, "logged out")
	assert.EqualValues(t, -32000, r.Error.Code)
	_, r = c.call("authenticate", map[string]any{"methodId": "nope"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code, "an unknown method id")
	_, r = c.call("authenticate", map[string]any{"methodId": "key"})
	require.Nil(t, r.Error)
	_, r = c.call("session/new", newSession)
	assert.Nil(t, r.Error, "logged in")
}

func TestAuthenticate_Misbehaviours(t *testing.T) {
	o := DefaultOptions()
	o.AuthMethods, o.AcceptUnknownAuth, o.FailAuthenticate = []string{"key"}, true, 7
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	_, r := c.call("authenticate", map[string]any{"methodId": "nope"})
	assert.Nil(t, r.Error, "--accept-unknown-auth")
	_, r = c.call("authenticate", map[string]any{"methodId": "key"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, 7, r.Error.Code, "--fail-authenticate")
}

func TestList_PagesFiltersAndBreaks(t *testing.T) {
	o := DefaultOptions()
	o.List, o.ListPageSize = true, 1
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	for _, cwd := range []string{"/a", "/b"} {
		_, r := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
		require.Nil(t, r.Error)
	}
	_, r := c.call("session/list", map[string]any{})
	require.Nil(t, r.Error)
	assert.Equal(t, []any{map[string]any{"sessionId": "sess-1", "cwd": "/a"}}, r.Result["sessions"])
	assert.Equal(t, "from-1", r.Result["nextCursor"])
	_, r = c.call("session/list", map[string]any{"cursor": "from-1"})
	assert.Equal(t, []any{map[string]any{"sessionId": "sess-2", "cwd": "/b"}}, r.Result["sessions"])
	assert.NotContains(t, r.Result, "nextCursor", "the last page")
	_, r = c.call("session/list", map[string]any{"cwd": "/b"})
	assert.Equal(t, []any{map[string]any{"sessionId": "sess-2", "cwd": "/b"}}, r.Result["sessions"])

	o.ListCursorLoop, o.ListOmitNewest, o.ListIgnoreCwd = true, true, true
	c = startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	c.call("session/new", map[string]any{"cwd": "/a", "mcpServers": []any{}})
	c.call("session/new", map[string]any{"cwd": "/b", "mcpServers": []any{}})
	_, r = c.call("session/list", map[string]any{"cwd": "/b"})
	assert.Equal(t, []any{map[string]any{"sessionId": "sess-1", "cwd": "/a"}}, r.Result["sessions"], "cwd ignored, newest omitted")
	assert.Equal(t, "from-0", r.Result["nextCursor"], "the cursor loops")
}

func TestModesAndConfigOptions(t *testing.T) {
	o := DefaultOptions()
	o.Modes, o.ModeIDsURL, o.ConfigOptions = true, true, true
	c := startAgent(t, o)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	_, r := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	require.Nil(t, r.Error)
	modes := r.Result["modes"].(map[string]any)
	assert.Equal(t, "https://acpkit.dev/refagent/modes#ask", modes["currentModeId"])
	assert.Len(t, modes["availableModes"], 2)
	assert.Equal(t, []any{map[string]any{"id": "effort", "name": "Effort", "category": "thought_level", "type": "select",
		"currentValue": "low", "options": []any{map[string]any{"value": "low", "name": "low"}, map[string]any{"value": "high", "name": "high"}}}},
		r.Result["configOptions"])

	updates, resp := c.call("session/set_mode", map[string]any{"sessionId": "sess-1", "modeId": "https://acpkit.dev/refagent/modes#code"})
	require.Nil(t, resp.Error)
	require.Len(t, updates, 1)
	assert.Equal(t, "current_mode_update", updates[0].kind())
	assert.Equal(t, "https://acpkit.dev/refagent/modes#code", updates[0].Params.Update["currentModeId"])
	_, r = c.call("session/set_mode", map[string]any{"sessionId": "sess-1", "modeId": "code"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code)

	_, r = c.call("session/set_config_option", map[string]any{"sessionId": "sess-1", "configId": "effort", "value": "high"})
	require.Nil(t, r.Error)
	assert.Equal(t, "high", r.Result["configOptions"].([]any)[0].(map[string]any)["currentValue"])
	for _, bad := range []map[string]any{{"configId": "nope", "value": "high"}, {"configId": "effort", "value": "max"}} {
		bad["sessionId"] = "sess-1"
		_, r = c.call("session/set_config_option", bad)
		require.NotNil(t, r.Error, bad)
		assert.EqualValues(t, -32602, r.Error.Code)
	}
}

func TestCloseKeepsSessionAndDeleteStrict(t *testing.T) {
	o := DefaultOptions()
	o.Close, o.Delete, o.CloseKeepsSession, o.DeleteStrict = true, true, true, true
	c := startAgent(t, o)
	sid := c.handshake()
	_, r := c.call("session/close", map[string]any{"sessionId": sid})
	require.Nil(t, r.Error)
	_, r = c.prompt(sid, "hi")
	assert.Nil(t, r.Error, "--close-keeps-session: the closed session still serves prompts")
	_, r = c.call("session/delete", map[string]any{"sessionId": "never-made"})
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32002, r.Error.Code, "--delete-strict")
}

func TestPrompt_ContentBlocksFollowPromptCapabilities(t *testing.T) {
	image := map[string]any{"type": "image", "mimeType": "image/png", "data": pngPixel}
	link := map[string]any{"type": "resource_link", "uri": "file:///w/README.md", "name": "README.md"}
	prompt := func(c *client, sid string, block map[string]any) msg {
		_, r := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}, block}})
		return r
	}
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	r := prompt(c, sid, image)
	require.NotNil(t, r.Error, "image is not advertised")
	assert.EqualValues(t, -32602, r.Error.Code)
	assert.Nil(t, prompt(c, sid, link).Error, "resource_link is baseline")

	o := DefaultOptions()
	o.PromptImage = true
	c = startAgent(t, o)
	sid = c.handshake()
	assert.Nil(t, prompt(c, sid, image).Error, "--prompt-image")

	o.RefuseAdvertisedContent, o.RefuseResourceLink = true, true
	c = startAgent(t, o)
	sid = c.handshake()
	assert.NotNil(t, prompt(c, sid, image).Error, "--refuse-advertised-content")
	assert.NotNil(t, prompt(c, sid, link).Error, "--refuse-resource-link")
}

func TestPrompt_ToolsCallOnlyOfferedClientMethods(t *testing.T) {
	methods := func(o Options, caps map[string]any) []string {
		c := startAgent(t, o)
		var called []string
		c.answer = func(method string, _ json.RawMessage) (any, *acpsdk.Error) {
			called = append(called, method)
			return map[string]any{"content": "# README", "terminalId": "t1"}, nil
		}
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
		_, created := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
		_, r := c.prompt(created.Result["sessionId"].(string), "tools")
		require.Nil(t, r.Error)
		return called
	}
	none := map[string]any{"fs": map[string]any{"readTextFile": false}, "terminal": false}
	assert.Empty(t, methods(DefaultOptions(), none))
	all := map[string]any{"fs": map[string]any{"readTextFile": true}, "terminal": true}
	assert.Equal(t, []string{"fs/read_text_file", "terminal/create"}, methods(DefaultOptions(), all))
	o := DefaultOptions()
	o.IgnoreClientCapabilities = true
	assert.Equal(t, []string{"fs/read_text_file", "terminal/create"}, methods(o, none))
}

func TestExtras_RejectedOnlyWhenAsked(t *testing.T) {
	params := map[string]any{"protocolVersion": 1, "_meta": map[string]any{"k": 1}, "futureMember": true}
	c := startAgent(t, DefaultOptions())
	_, r := c.call("initialize", params)
	assert.Nil(t, r.Error, "by default _meta and unknown members are ignored")

	o := DefaultOptions()
	o.RejectMeta = true
	c = startAgent(t, o)
	_, r = c.call("initialize", params)
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32602, r.Error.Code)
	assert.Contains(t, r.Error.Message, "_meta")

	o = DefaultOptions()
	o.RejectUnknownMembers = true
	c = startAgent(t, o)
	_, r = c.call("initialize", map[string]any{"protocolVersion": 1, "_meta": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
	assert.Nil(t, r.Error, "members the type defines pass")
	_, r = c.call("initialize", params)
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, `"futureMember"`)
}

func TestCancel_Faults(t *testing.T) {
	o := DefaultOptions()
	o.StickyCancel = true
	c := startAgent(t, o)
	sid := c.handshake()
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	c.call("acpcheck/ping", map[string]any{}) // the cancel has been read
	_, r := c.prompt(sid, "hi")
	assert.Equal(t, "cancelled", r.Result["stopReason"], "--sticky-cancel: a cancel meant for no turn ends the next")

	o = DefaultOptions()
	o.StuckAfterCancel, o.SlowFor = true, time.Second
	c = startAgent(t, o)
	sid = c.handshake()
	id := c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "slow"}}})
	c.next() // the first update: the turn runs
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	_, r = c.until(id)
	require.Equal(t, "cancelled", r.Result["stopReason"])
	_, r = c.prompt(sid, "hi")
	require.NotNil(t, r.Error, "--stuck-after-cancel")
	assert.EqualValues(t, -32603, r.Error.Code)
}

func TestPermission_CancelledOutcomeErrorOnRequest(t *testing.T) {
	o := DefaultOptions()
	o.CancelledPermissionError = true
	c := startAgent(t, o)
	c.answer = func(method string, _ json.RawMessage) (any, *acpsdk.Error) {
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	sid := c.handshake()
	_, r := c.prompt(sid, "permission")
	require.NotNil(t, r.Error)
	assert.EqualValues(t, -32603, r.Error.Code)
}
