package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/refagent"
	"acpkit.dev/internal/schemapin"
)

// pin is the surface of schema/pin.json that acpsdk/gen is generated
// from (the runtime's), with the package it comes from.
type pin struct {
	Package string
	Version string
	File    string
	SHA256  string
}

func readPin(t *testing.T) pin {
	t.Helper()
	p, s, err := schemapin.Runtime(filepath.Join("..", ".."))
	require.NoError(t, err)
	return pin{Package: p.Package, Version: p.Version, File: s.File, SHA256: s.SHA256}
}

// TestSDK1_HandshakeVersionPinned: the protocol version our clients send
// equals the SDK's constant equals the pinned schema's, and the SDK was
// generated from exactly the pinned file.
func TestSDK1_HandshakeVersionPinned(t *testing.T) {
	p := readPin(t)
	m := regexp.MustCompile(`(?:^|/)v(\d+)/`).FindStringSubmatch(p.File)
	require.NotNil(t, m, "pin file path %q names no schema version", p.File)
	pinned, err := strconv.Atoi(m[1])
	require.NoError(t, err)

	schema, err := os.ReadFile(filepath.Join("..", "..", p.File))
	require.NoError(t, err)
	sum := sha256.Sum256(schema)
	assert.Equal(t, p.SHA256, hex.EncodeToString(sum[:]), "the committed schema is the pinned one")
	assert.Equal(t, p.SHA256, gen.SchemaSHA256, "acpsdk/gen was generated from the pinned schema")
	assert.Equal(t, p.Package, gen.SchemaPackage)
	assert.Equal(t, p.Version, gen.SchemaVersion)

	assert.EqualValues(t, pinned, gen.LatestProtocolVersion, "SDK constant vs pinned schema")
	assert.EqualValues(t, gen.LatestProtocolVersion, check.RequestedVersion, "acpcheck's client")
	assert.EqualValues(t, gen.LatestProtocolVersion, refagent.LatestProtocolVersion, "the reference agent")

	// What acpsdk's client actually puts on the wire, and what the agent
	// answers.
	s := connect(t)
	r := s.initialize()
	assert.Equal(t, gen.LatestProtocolVersion, r.ProtocolVersion)
	s.mu.Lock()
	require.NotEmpty(t, s.sent)
	var sent struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion json.Number `json:"protocolVersion"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(s.sent[0], &sent))
	s.mu.Unlock()
	assert.Equal(t, gen.MethodInitialize, sent.Method)
	assert.Equal(t, strconv.Itoa(pinned), sent.Params.ProtocolVersion.String())
}

// TestSDK6_TypedTurnAgainstReferenceAgent: a full turn — thought, plan,
// tool calls through their statuses, a refused permission, two messages —
// arrives as typed updates, and all of them before Prompt returns (SDK-7).
func TestSDK6_TypedTurnAgainstReferenceAgent(t *testing.T) {
	s := connect(t)
	init := s.initialize()
	require.NotNil(t, init.AgentInfo)
	assert.Equal(t, "acpkit-refagent", init.AgentInfo.Name)
	sid := s.newSession()

	r, err := s.prompt(sid, "full permission")
	require.NoError(t, err)
	assert.Equal(t, gen.StopReasonEndTurn, r.StopReason)

	var kinds []string
	tools := map[gen.ToolCallID][]gen.ToolCallStatus{}
	messages := map[gen.MessageID]string{}
	for _, n := range s.client.take() {
		assert.Equal(t, sid, n.SessionID)
		switch u := n.Update.(type) {
		case *gen.SessionUpdateAgentThoughtChunk:
			kinds = append(kinds, "thought")
		case *gen.SessionUpdatePlan:
			kinds = append(kinds, "plan")
			assert.Len(t, u.Entries, 2)
		case *gen.SessionUpdateToolCall:
			kinds = append(kinds, "tool_call")
			require.NotNil(t, u.Status)
			tools[u.ToolCallID] = append(tools[u.ToolCallID], *u.Status)
		case *gen.SessionUpdateToolCallUpdate:
			require.NotNil(t, u.Status)
			tools[u.ToolCallID] = append(tools[u.ToolCallID], *u.Status)
		case *gen.SessionUpdateAgentMessageChunk:
			text, ok := u.Content.(*gen.ContentBlockText)
			require.True(t, ok)
			require.NotNil(t, u.MessageID)
			messages[*u.MessageID] += text.Text
		default:
			t.Fatalf("unexpected update %T", u)
		}
	}
	assert.Equal(t, []string{"thought", "plan", "tool_call", "tool_call", "tool_call", "tool_call"}, kinds)
	assert.Equal(t, []gen.ToolCallStatus{"pending", "in_progress", "completed"}, tools["read-1"])
	assert.Equal(t, []gen.ToolCallStatus{"pending", "in_progress", "failed"}, tools["exec-1"])
	assert.Equal(t, []gen.ToolCallStatus{"pending", "failed"}, tools["perm-1"], "the refused tool call fails")
	assert.Equal(t, "Hello, from the reference agent.", messages[gen.MessageID(string(sid)+"-t1-m1")])
	assert.Equal(t, "You said: full permission", messages[gen.MessageID(string(sid)+"-t1-m2")])
	require.Len(t, s.client.perms, 1)
	assert.Len(t, s.client.perms[0].Options, 2)
}

// TestSDK8_CancelledTurnEndsCancelled: session/cancel during a slow turn
// ends it with stopReason cancelled.
func TestSDK8_CancelledTurnEndsCancelled(t *testing.T) {
	s := connect(t)
	s.initialize()
	sid := s.newSession()
	type result struct {
		r   *gen.PromptResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := s.prompt(sid, "slow")
		done <- result{r, err}
	}()
	select {
	case <-s.client.first:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow turn sent no update within 10s")
	}
	require.NoError(t, s.peer.Cancel(s.ctx(), &gen.CancelNotification{SessionID: sid}))
	res := <-done
	require.NoError(t, res.err)
	assert.Equal(t, gen.StopReasonCancelled, res.r.StopReason)
}

// TestSDK7_LoadReplaysBeforeRespondingResumeDoesNot: across two processes
// sharing a state directory, session/load replays the conversation (every
// replayed update handled before LoadSession returns) and session/resume
// does not; the MCP servers each request carried are recorded as sent.
func TestSDK7_LoadReplaysBeforeRespondingResumeDoesNot(t *testing.T) {
	state, record := t.TempDir(), filepath.Join(t.TempDir(), "mcp.jsonl")
	flags := []string{"--load-session", "--resume", "--state-dir", state, "--record-mcp", record}

	first := connect(t, flags...)
	first.initialize()
	servers := []gen.McpServer{
		&gen.McpServerStdio{Name: "files", Command: "/usr/bin/files", Args: []string{"--root", "/"}, Env: []gen.EnvVariable{{Name: "A", Value: "1"}}},
		&gen.McpServerHTTP{Name: "web", URL: "https://example.test/mcp", Headers: []gen.HTTPHeader{}},
	}
	sid := first.newSession(servers...)
	_, err := first.prompt(sid, "remember this")
	require.NoError(t, err)
	first.close()

	second := connect(t, flags...)
	init := second.initialize()
	require.True(t, init.AgentCapabilities.LoadSession)
	require.NotNil(t, init.AgentCapabilities.SessionCapabilities.Resume)
	second.client.take()
	_, err = second.peer.LoadSession(second.ctx(), &gen.LoadSessionRequest{SessionID: sid, Cwd: t.TempDir(), McpServers: servers})
	require.NoError(t, err)
	replay := second.client.take()
	require.Len(t, replay, 2, "replayed before the response")
	user, ok := replay[0].Update.(*gen.SessionUpdateUserMessageChunk)
	require.True(t, ok)
	assert.Equal(t, "remember this", user.Content.(*gen.ContentBlockText).Text)
	_, ok = replay[1].Update.(*gen.SessionUpdateAgentMessageChunk)
	assert.True(t, ok)

	_, err = second.peer.ResumeSession(second.ctx(), &gen.ResumeSessionRequest{SessionID: sid, Cwd: t.TempDir()})
	require.NoError(t, err)
	assert.Empty(t, second.client.take(), "resume does not replay")

	b, err := os.ReadFile(record)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 3)
	var rec refagent.Record
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, gen.MethodSessionNew, rec.Method)
	sent, err := json.Marshal(servers)
	require.NoError(t, err)
	assert.JSONEq(t, string(sent), string(rec.MCPServers), "the agent received the servers exactly")
}

// TestSDK3_UnknownVariantsAndStopReasons: an update variant the schema
// does not know is kept raw; a stop reason it does not know fails the
// typed decode with a path, not silently.
func TestSDK3_UnknownVariantsAndStopReasons(t *testing.T) {
	s := connect(t)
	s.initialize()
	sid := s.newSession()
	_, err := s.prompt(sid, "unknown-update image")
	require.NoError(t, err)
	var unknown *gen.SessionUpdateUnknown
	for _, n := range s.client.take() {
		if u, ok := n.Update.(*gen.SessionUpdateUnknown); ok {
			unknown = u
		}
	}
	require.NotNil(t, unknown)
	assert.Contains(t, string(unknown.Raw), `"refagent_custom_update"`)

	_, err = s.prompt(sid, "stop=paused")
	var de *gen.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "stopReason")
}

// TestSDK9_SDK10_BadLinesFromTheAgentAreSurvived: an 11 MiB line and a
// non-JSON line mid-turn are reported and skipped; the turn completes.
func TestSDK9_SDK10_BadLinesFromTheAgentAreSurvived(t *testing.T) {
	s := connect(t)
	s.initialize()
	sid := s.newSession()
	r, err := s.prompt(sid, "oversize garbage")
	require.NoError(t, err)
	assert.Equal(t, gen.StopReasonEndTurn, r.StopReason)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, 1, s.oversize)
	assert.Equal(t, 1, s.garbage)
}

// TestSDK9_AgentExitMidTurnEndsTheCall: the agent exits mid-turn; the
// pending prompt fails as a closed connection and the exit status is the
// one asked for.
func TestSDK9_AgentExitMidTurnEndsTheCall(t *testing.T) {
	s := connect(t)
	s.initialize()
	sid := s.newSession()
	_, err := s.prompt(sid, "exit=7")
	require.ErrorIs(t, err, acpsdk.ErrClosed)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not exit within 10s")
	}
	var ee *exec.ExitError
	require.True(t, errors.As(s.waitErr, &ee), "%v", s.waitErr)
	assert.Equal(t, 7, ee.ExitCode())
}

// TestSDK10_AuthRequiredIsTyped: -32000 from session/new is an *acpsdk.Error
// matching ErrAuthRequired.
func TestSDK10_AuthRequiredIsTyped(t *testing.T) {
	s := connect(t, "--fail-new-session", "-32000")
	s.initialize()
	_, err := s.peer.NewSession(s.ctx(), &gen.NewSessionRequest{Cwd: t.TempDir(), McpServers: []gen.McpServer{}})
	require.ErrorIs(t, err, acpsdk.ErrAuthRequired)
}

// TestSDK6_StrictModeFollowsTheAgentsCapabilities: acpsdk's strict client
// refuses, without sending, what the reference agent did not advertise,
// and allows it once advertised.
func TestSDK6_StrictModeFollowsTheAgentsCapabilities(t *testing.T) {
	s := connect(t)
	s.initialize()
	s.mu.Lock()
	before := len(s.sent)
	s.mu.Unlock()
	_, err := s.peer.LoadSession(s.ctx(), &gen.LoadSessionRequest{SessionID: "sess-1", Cwd: t.TempDir(), McpServers: []gen.McpServer{}})
	var ce *acpsdk.CapabilityError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, gen.MethodSessionLoad, ce.Method)
	s.mu.Lock()
	assert.Equal(t, before, len(s.sent), "nothing was sent")
	s.mu.Unlock()

	s = connect(t, "--load-session")
	s.initialize()
	sid := s.newSession()
	_, err = s.peer.LoadSession(s.ctx(), &gen.LoadSessionRequest{SessionID: sid, Cwd: t.TempDir(), McpServers: []gen.McpServer{}})
	require.NoError(t, err)
}
