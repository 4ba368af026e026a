package tsinterop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// goClient is the Go client's handler side (a gen.Client): it records every
// session/update as a one-line event and answers permission requests by
// selecting the reject_once option.
type goClient struct {
	mu      sync.Mutex
	session gen.SessionID
	events  []string
	perms   []*gen.RequestPermissionRequest
	// onUpdate, when set, runs after an update is recorded, with the
	// handler's context (so it may call the agent).
	onUpdate func(ctx context.Context)
}

var _ gen.Client = (*goClient)(nil)

// SessionUpdate records the update.
func (c *goClient) SessionUpdate(ctx context.Context, n *gen.SessionNotification) error {
	c.mu.Lock()
	ev := describeUpdate(n.Update)
	if n.SessionID != c.session {
		ev = fmt.Sprintf("[session %s] %s", n.SessionID, ev)
	}
	c.events = append(c.events, ev)
	hook := c.onUpdate
	c.mu.Unlock()
	if hook != nil {
		hook(ctx)
	}
	return nil
}

// RequestPermission selects the reject_once option.
func (c *goClient) RequestPermission(_ context.Context, req *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, req)
	c.mu.Unlock()
	for _, o := range req.Options {
		if o.Kind == gen.PermissionOptionKindRejectOnce {
			return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: o.OptionID}}, nil
		}
	}
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// take returns the events recorded since the last take.
func (c *goClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	c.events = nil
	return ev
}

func (c *goClient) setHook(f func(ctx context.Context)) {
	c.mu.Lock()
	c.onUpdate = f
	c.mu.Unlock()
}

// describeUpdate renders the parts of an update the flow asserts on.
func describeUpdate(u gen.SessionUpdate) string {
	text := func(b gen.ContentBlock) string {
		if t, ok := b.(*gen.ContentBlockText); ok {
			return fmt.Sprintf("%q", t.Text)
		}
		return fmt.Sprintf("%T", b)
	}
	status := func(s *gen.ToolCallStatus) string {
		if s == nil {
			return "<no status>"
		}
		return string(*s)
	}
	switch u := u.(type) {
	case *gen.SessionUpdateUserMessageChunk:
		return "user_message_chunk " + text(u.Content)
	case *gen.SessionUpdateAgentMessageChunk:
		return "agent_message_chunk " + text(u.Content)
	case *gen.SessionUpdateToolCall:
		return fmt.Sprintf("tool_call %s %s", u.ToolCallID, status(u.Status))
	case *gen.SessionUpdateToolCallUpdate:
		return fmt.Sprintf("tool_call_update %s %s", u.ToolCallID, status(u.Status))
	default:
		return fmt.Sprintf("%T", u)
	}
}

// agentProc is one agent.mjs process with our Go client connected to it.
type agentProc struct {
	cmd    *exec.Cmd
	side   *acpsdk.ClientSide
	agent  *gen.AgentPeer
	stderr *bytes.Buffer
	exited bool

	mu sync.Mutex
	// inbound holds every line read from the agent, in order.
	inbound []string
}

// requestsIn returns the inbound request lines for method.
func (p *agentProc) requestsIn(method string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, line := range p.inbound {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

// startTSAgent starts `node agent.mjs` with its session store in storeDir
// and connects client to it through acpsdk's client side, in strict mode.
// Cleanup closes the connection and reaps the process if the test did not.
func startTSAgent(t *testing.T, storeDir string, client gen.Client) *agentProc {
	t.Helper()
	dir := peerDir(t)
	cmd := exec.Command("node", filepath.Join(dir, "agent.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ACP_INTEROP_STORE="+storeDir)
	p := &agentProc{cmd: cmd, stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	tap := func(dir acpsdk.Direction, line []byte) {
		if dir == acpsdk.DirectionIn {
			p.mu.Lock()
			p.inbound = append(p.inbound, string(line))
			p.mu.Unlock()
		}
	}
	side, err := acpsdk.StartAgent(cmd, client, &acpsdk.SideOptions{Strict: true, Options: acpsdk.Options{Tap: tap}})
	require.NoError(t, err)
	p.side, p.agent = side, side.Agent()
	t.Cleanup(func() {
		if !p.exited {
			_ = p.side.Close()
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// stop ends the connection the way an editor does, by closing the agent's
// stdin, and requires the agent to exit 0 on its own.
func (p *agentProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.side.Close())
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	select {
	case err := <-waited:
		p.exited = true
		require.NoError(t, err, "agent.mjs exit; stderr:\n%s", p.stderr)
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-waited
		p.exited = true
		t.Fatalf("agent.mjs did not exit within 10s of stdin closing; stderr:\n%s", p.stderr)
	}
}

// plainTurn is what goClient records of turn n of agent.mjs (README.md)
// for a prompt without a keyword.
func plainTurn(n int, prompt string) []string {
	return []string{
		fmt.Sprintf(`agent_message_chunk "turn %d: "`, n),
		`agent_message_chunk "` + prompt + `"`,
		`agent_message_chunk " [done]"`,
		fmt.Sprintf("tool_call call-%d pending", n),
		fmt.Sprintf("tool_call_update call-%d completed", n),
	}
}

// rejectedTurn is the same for a prompt asking for permission, which
// goClient rejects.
func rejectedTurn(n int, prompt string) []string {
	return []string{
		fmt.Sprintf(`agent_message_chunk "turn %d: "`, n),
		`agent_message_chunk "` + prompt + `"`,
		`agent_message_chunk " [done]"`,
		fmt.Sprintf("tool_call call-%d pending", n),
		`agent_message_chunk "permission: reject-once"`,
		fmt.Sprintf("tool_call_update call-%d failed", n),
	}
}

func textPrompt(s string) []gen.ContentBlock {
	return []gen.ContentBlock{&gen.ContentBlockText{Text: s}}
}

// The prompts the Go client sends.
const (
	goPromptPlain      = "hello from the Go client"
	goPromptPermission = "Go asks: permission please"
	goPromptSlow       = "a slow one from Go"
	goPromptSlowAbort  = "another slow one, aborted by request"
)

// TestGoClientTSAgent drives the TypeScript SDK's agent with acpkit's Go
// client through the whole flow, asserting every step on the wire's terms.
func TestGoClientTSAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := t.TempDir()
	client := &goClient{}
	p := startTSAgent(t, store, client)

	init, err := p.agent.Initialize(ctx, &gen.InitializeRequest{
		ProtocolVersion: 1,
		ClientInfo:      &gen.Implementation{Name: "acpkit-tsinterop-goclient", Version: "1.0.0"},
	})
	require.NoError(t, err)
	assert.EqualValues(t, 1, init.ProtocolVersion)
	assert.True(t, init.AgentCapabilities.LoadSession)
	require.NotNil(t, init.AgentInfo)
	assert.Equal(t, "acpkit-tsinterop-agent", init.AgentInfo.Name)

	sess, err := p.agent.NewSession(ctx, &gen.NewSessionRequest{Cwd: store, McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.NotEmpty(t, sess.SessionID)
	sid := sess.SessionID
	client.mu.Lock()
	client.session = sid
	client.mu.Unlock()

	// SDK-7: when Prompt returns, every update the agent sent before its
	// answer has been handled, in wire order.
	t.Run("SDK7_PromptTurnStreamsUpdatesBeforeItsAnswer", func(t *testing.T) {
		res, err := p.agent.Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: textPrompt(goPromptPlain)})
		require.NoError(t, err)
		assert.Equal(t, gen.StopReasonEndTurn, res.StopReason)
		assert.Equal(t, plainTurn(1, goPromptPlain), client.take())
	})

	// The TypeScript SDK numbers its requests from 0, so this first request
	// from the agent also shows id 0 is answered like any other.
	t.Run("PermissionRequestAnsweredByReject", func(t *testing.T) {
		res, err := p.agent.Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: textPrompt(goPromptPermission)})
		require.NoError(t, err)
		assert.Equal(t, gen.StopReasonEndTurn, res.StopReason)
		assert.Equal(t, rejectedTurn(2, goPromptPermission), client.take())
		client.mu.Lock()
		defer client.mu.Unlock()
		require.Len(t, client.perms, 1)
		req := client.perms[0]
		assert.Equal(t, sid, req.SessionID)
		assert.Equal(t, gen.ToolCallID("call-2"), req.ToolCall.ToolCallID)
		require.Len(t, req.Options, 2)
		assert.Equal(t, gen.PermissionOptionID("allow-once"), req.Options[0].OptionID)
		assert.Equal(t, gen.PermissionOptionKindAllowOnce, req.Options[0].Kind)
		assert.Equal(t, gen.PermissionOptionID("reject-once"), req.Options[1].OptionID)
		assert.Equal(t, gen.PermissionOptionKindRejectOnce, req.Options[1].Kind)

		wire := p.requestsIn(gen.MethodSessionRequestPermission)
		require.Len(t, wire, 1)
		assert.Equal(t, float64(0), wire[0]["id"], "request id on the wire")
	})

	// The first update of a slow turn shows the agent is inside it; the
	// client cancels from its update handler, with the handler's context.
	t.Run("SessionCancelEndsTurnWithCancelled", func(t *testing.T) {
		var once sync.Once
		cancelErr := make(chan error, 1)
		client.setHook(func(hctx context.Context) {
			once.Do(func() { cancelErr <- p.agent.Cancel(hctx, &gen.CancelNotification{SessionID: sid}) })
		})
		defer client.setHook(nil)
		res, err := p.agent.Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: textPrompt(goPromptSlow)})
		require.NoError(t, err)
		require.NoError(t, <-cancelErr)
		assert.Equal(t, gen.StopReasonCancelled, res.StopReason)
		assert.Equal(t, []string{`agent_message_chunk "working slowly; waiting for session/cancel"`}, client.take())
	})

	// SDK-8: PendingCall.Cancel sends $/cancel_request for the prompt, and
	// the call still returns the agent's final answer, which agent.mjs
	// gives as stop reason cancelled.
	t.Run("SDK8_CancelRequestKeepsWaitingForFinalAnswer", func(t *testing.T) {
		updated := make(chan struct{})
		var once sync.Once
		client.setHook(func(context.Context) { once.Do(func() { close(updated) }) })
		defer client.setHook(nil)
		pc, err := p.side.Go(ctx, gen.MethodSessionPrompt, &gen.PromptRequest{SessionID: sid, Prompt: textPrompt(goPromptSlowAbort)})
		require.NoError(t, err)
		<-updated
		pc.Cancel()
		var res gen.PromptResponse
		require.NoError(t, pc.Result(&res))
		assert.Equal(t, gen.StopReasonCancelled, res.StopReason)
		assert.Equal(t, []string{`agent_message_chunk "working slowly; waiting for session/cancel"`}, client.take())
	})

	// Strict mode knows from the session/new answer that agent.mjs offers
	// no modes, so it refuses session/set_mode without sending it.
	t.Run("StrictRefusesUnadvertisedCall", func(t *testing.T) {
		_, err := p.agent.SetSessionMode(ctx, &gen.SetSessionModeRequest{SessionID: sid, ModeID: "fast"})
		require.ErrorIs(t, err, acpsdk.ErrNotAdvertised)
		var capErr *acpsdk.CapabilityError
		require.ErrorAs(t, err, &capErr)
		assert.Equal(t, gen.MethodSessionSetMode, capErr.Method)
		assert.Empty(t, client.take())
	})

	t.Run("UnknownSessionIsResourceNotFound", func(t *testing.T) {
		_, err := p.agent.Prompt(ctx, &gen.PromptRequest{SessionID: "no-such-session", Prompt: textPrompt("hi")})
		require.ErrorIs(t, err, acpsdk.ErrResourceNotFound)
		assert.Empty(t, client.take())
	})

	p.stop(t)

	// A fresh process (a fresh connection on stdio) loads the session from
	// the store and replays it before answering session/load (SDK-7).
	t.Run("SDK7_LoadSessionReplaysBeforeItsAnswer", func(t *testing.T) {
		reload := &goClient{session: sid}
		q := startTSAgent(t, store, reload)
		_, err := q.agent.Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
		require.NoError(t, err)
		_, err = q.agent.LoadSession(ctx, &gen.LoadSessionRequest{SessionID: sid, Cwd: store, McpServers: []gen.McpServer{}})
		require.NoError(t, err)
		user := func(s string) string { return fmt.Sprintf("user_message_chunk %q", s) }
		agent := func(s string) string { return fmt.Sprintf("agent_message_chunk %q", s) }
		assert.Equal(t, []string{
			user(goPromptPlain), agent("turn 1: "), agent(goPromptPlain), agent(" [done]"),
			user(goPromptPermission), agent("turn 2: "), agent(goPromptPermission), agent(" [done]"), agent("permission: reject-once"),
			user(goPromptSlow), agent("working slowly; waiting for session/cancel"),
			user(goPromptSlowAbort), agent("working slowly; waiting for session/cancel"),
		}, reload.take())
		q.stop(t)
	})
}
