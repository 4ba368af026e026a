package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// fakeClient records updates as one-line events and answers permission
// requests with outcome.
type fakeClient struct {
	outcome gen.RequestPermissionOutcome
	mu      sync.Mutex
	events  []string
	// updates receives every update's event, for tests that wait on one.
	updates chan string
}

func (c *fakeClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	var ev string
	switch u := n.Update.(type) {
	case *gen.SessionUpdateUserMessageChunk:
		ev = fmt.Sprintf("user %q", u.Content.(*gen.ContentBlockText).Text)
	case *gen.SessionUpdateAgentMessageChunk:
		ev = fmt.Sprintf("agent %q", u.Content.(*gen.ContentBlockText).Text)
	case *gen.SessionUpdateToolCall:
		ev = fmt.Sprintf("tool_call %s %s", u.ToolCallID, *u.Status)
	case *gen.SessionUpdateToolCallUpdate:
		ev = fmt.Sprintf("tool_call_update %s %s", u.ToolCallID, *u.Status)
	default:
		ev = fmt.Sprintf("%T", u)
	}
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
	if c.updates != nil {
		c.updates <- ev
	}
	return nil
}

func (c *fakeClient) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: c.outcome}, nil
}

func (c *fakeClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	c.events = nil
	return ev
}

// connect runs the agent and a client side over in-memory pipes, initialized
// and with one session, and returns the client side and the session id.
func connect(t *testing.T, client *fakeClient) (*acpsdk.ClientSide, gen.SessionID) {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	a := newAgent(slog.New(slog.DiscardHandler), newStore(""))
	side := acpsdk.NewAgentSide(agentIn, agentOut, a, &acpsdk.SideOptions{Strict: true})
	a.setClient(side.Client())
	cs := acpsdk.NewClientSide(clientIn, clientOut, client, &acpsdk.SideOptions{Strict: true})
	t.Cleanup(func() {
		assert.NoError(t, cs.Close())
		assert.NoError(t, side.Close())
	})
	ctx := t.Context()
	_, err := cs.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	res, err := cs.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	return cs, res.SessionID
}

func prompt(text string) []gen.ContentBlock {
	return []gen.ContentBlock{&gen.ContentBlockText{Text: text}}
}

func TestPermissionOutcomes(t *testing.T) {
	for name, tc := range map[string]struct {
		outcome gen.RequestPermissionOutcome
		chosen  string
		status  string
	}{
		"allow":     {&gen.RequestPermissionOutcomeSelected{OptionID: allowID}, "allow-once", "completed"},
		"reject":    {&gen.RequestPermissionOutcomeSelected{OptionID: rejectID}, "reject-once", "failed"},
		"cancelled": {&gen.RequestPermissionOutcomeCancelled{}, "cancelled", "failed"},
	} {
		t.Run(name, func(t *testing.T) {
			client := &fakeClient{outcome: tc.outcome}
			cs, sid := connect(t, client)
			res, err := cs.Agent().Prompt(t.Context(), &gen.PromptRequest{SessionID: sid, Prompt: prompt("permission?")})
			require.NoError(t, err)
			assert.Equal(t, gen.StopReasonEndTurn, res.StopReason)
			assert.Equal(t, []string{
				`agent "turn 1: "`, `agent "permission?"`, `agent " [done]"`,
				"tool_call call-1 pending",
				fmt.Sprintf("agent %q", "permission: "+tc.chosen),
				"tool_call_update call-1 " + tc.status,
			}, client.take())
		})
	}
}

func TestUnknownSessionIsResourceNotFoundWithSessionID(t *testing.T) {
	cs, _ := connect(t, &fakeClient{})
	_, err := cs.Agent().Prompt(t.Context(), &gen.PromptRequest{SessionID: "sess-404", Prompt: prompt("hi")})
	require.ErrorIs(t, err, acpsdk.ErrResourceNotFound)
	var wireErr *acpsdk.Error
	require.ErrorAs(t, err, &wireErr)
	var data struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(wireErr.Data, &data))
	assert.Equal(t, "sess-404", data.SessionID)

	_, err = cs.Agent().LoadSession(t.Context(), &gen.LoadSessionRequest{SessionID: "sess-404", Cwd: "/", McpServers: []gen.McpServer{}})
	require.ErrorIs(t, err, acpsdk.ErrResourceNotFound)
}

// A second prompt while a turn runs is refused; session/cancel then ends
// the running turn with cancelled.
func TestSecondPromptDuringTurnIsInvalidRequest(t *testing.T) {
	client := &fakeClient{updates: make(chan string, 8)}
	cs, sid := connect(t, client)
	ctx := t.Context()
	slow, err := cs.Go(ctx, gen.MethodSessionPrompt, &gen.PromptRequest{SessionID: sid, Prompt: prompt("slow")})
	require.NoError(t, err)
	assert.Equal(t, `agent "working slowly; waiting for session/cancel"`, <-client.updates)

	_, err = cs.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: prompt("hi")})
	require.ErrorIs(t, err, acpsdk.ErrInvalidRequest)

	require.NoError(t, cs.Agent().Cancel(ctx, &gen.CancelNotification{SessionID: sid}))
	<-slow.Done()
	var res gen.PromptResponse
	require.NoError(t, slow.Result(&res))
	assert.Equal(t, gen.StopReasonCancelled, res.StopReason)
}

// SDK-8: $/cancel_request for the prompt ends the turn like session/cancel.
func TestSDK8_CancelRequestEndsSlowTurn(t *testing.T) {
	client := &fakeClient{updates: make(chan string, 8)}
	cs, sid := connect(t, client)
	pc, err := cs.Go(t.Context(), gen.MethodSessionPrompt, &gen.PromptRequest{SessionID: sid, Prompt: prompt("slow")})
	require.NoError(t, err)
	<-client.updates
	pc.Cancel()
	var res gen.PromptResponse
	require.NoError(t, pc.Result(&res))
	assert.Equal(t, gen.StopReasonCancelled, res.StopReason)
}

func TestLoadReplaysConversationInOrder(t *testing.T) {
	client := &fakeClient{outcome: &gen.RequestPermissionOutcomeSelected{OptionID: allowID}}
	cs, sid := connect(t, client)
	ctx := t.Context()
	for _, p := range []string{"one", "two with permission"} {
		_, err := cs.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: prompt(p)})
		require.NoError(t, err)
	}
	client.take()
	_, err := cs.Agent().LoadSession(ctx, &gen.LoadSessionRequest{SessionID: sid, Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		`user "one"`, `agent "turn 1: "`, `agent "one"`, `agent " [done]"`,
		`user "two with permission"`, `agent "turn 2: "`, `agent "two with permission"`, `agent " [done]"`, `agent "permission: allow-once"`,
	}, client.take())
}

// serve returns when the client goes away mid-turn, and only after the
// cancelled turn has saved its session.
func TestClientGoneMidTurnSavesSession(t *testing.T) {
	dir := t.TempDir()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- serve(slog.New(slog.DiscardHandler), newStore(dir), agentIn, agentOut) }()
	client := &fakeClient{updates: make(chan string, 8)}
	cs := acpsdk.NewClientSide(clientIn, clientOut, client, nil)
	ctx := t.Context()
	_, err := cs.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	sess, err := cs.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	_, err = cs.Go(ctx, gen.MethodSessionPrompt, &gen.PromptRequest{SessionID: sess.SessionID, Prompt: prompt("slow")})
	require.NoError(t, err)
	<-client.updates
	require.NoError(t, cs.Close())
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after the client closed")
	}

	reread := newStore(dir)
	reread.mu.Lock()
	defer reread.mu.Unlock()
	got, err := reread.lookupLocked(sess.SessionID)
	require.NoError(t, err)
	assert.Equal(t, []entry{{roleUser, "slow"}, {roleAgent, "working slowly; waiting for session/cancel"}}, got.history)
}
