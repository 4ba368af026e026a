package acpsdk

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen/v1unstable"
	"acpkit.dev/acpsdk/internal/surface"
)

// unstableAgent is a v1 unstable agent whose initialize answer is init and
// which handles session/fork and session/set_title.
type unstableAgent struct {
	init   string
	titles chan string
}

func (a *unstableAgent) Initialize(context.Context, *v1unstable.InitializeRequest) (*v1unstable.InitializeResponse, error) {
	var r v1unstable.InitializeResponse
	return &r, json.Unmarshal([]byte(a.init), &r)
}

func (a *unstableAgent) NewSession(context.Context, *v1unstable.NewSessionRequest) (*v1unstable.NewSessionResponse, error) {
	return &v1unstable.NewSessionResponse{SessionID: "s1"}, nil
}

func (a *unstableAgent) ForkSession(_ context.Context, p *v1unstable.ForkSessionRequest) (*v1unstable.ForkSessionResponse, error) {
	return &v1unstable.ForkSessionResponse{SessionID: p.SessionID + "-fork"}, nil
}

func (a *unstableAgent) SetSessionTitle(_ context.Context, p *v1unstable.SetSessionTitleRequest) (*v1unstable.SetSessionTitleResponse, error) {
	a.titles <- string(p.SessionID) + ": " + p.Title
	return &v1unstable.SetSessionTitleResponse{Title: p.Title}, nil
}

func (a *unstableAgent) Prompt(context.Context, *v1unstable.PromptRequest) (*v1unstable.PromptResponse, error) {
	return &v1unstable.PromptResponse{StopReason: v1unstable.StopReasonEndTurn}, nil
}

func (a *unstableAgent) Cancel(context.Context, *v1unstable.CancelNotification) error { return nil }

type unstableClient struct{}

func (unstableClient) SessionUpdate(context.Context, *v1unstable.SessionNotification) error {
	return nil
}

func (unstableClient) RequestPermission(context.Context, *v1unstable.RequestPermissionRequest) (*v1unstable.RequestPermissionResponse, error) {
	return &v1unstable.RequestPermissionResponse{Outcome: &v1unstable.RequestPermissionOutcomeCancelled{}}, nil
}

// unstablePair is a strict v1 unstable client and a v1 unstable agent over
// pipes; the client's sent lines are tapped.
type unstablePair struct {
	client   *ClientSideOf[*v1unstable.AgentPeer]
	agent    *AgentSideOf[*v1unstable.ClientPeer]
	impl     *unstableAgent
	clientTx lineLog
}

func newUnstablePair(t *testing.T, init string) *unstablePair {
	t.Helper()
	p := &unstablePair{impl: &unstableAgent{init: init, titles: make(chan string, 4)}}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	p.agent = NewAgentSideOf(v1unstable.Surface, c2aR, a2cW, v1unstable.Agent(p.impl), nil)
	p.client = NewClientSideOf(v1unstable.Surface, a2cR, c2aW, v1unstable.Client(unstableClient{}), &SideOptions{Options: Options{Tap: p.clientTx.tap}, Strict: true})
	t.Cleanup(func() {
		require.NoError(t, p.client.Close())
		require.NoError(t, p.agent.Close())
	})
	return p
}

// TestSDK6_StrictUnstableRefusesUnadvertisedFork: on the v1 unstable
// surface, session/fork and session/set_title need the agent's
// sessionCapabilities.fork and .title; unadvertised, they are refused with
// a *CapabilityError and nothing is sent.
func TestSDK6_StrictUnstableRefusesUnadvertisedFork(t *testing.T) {
	p := newUnstablePair(t, `{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"list":{}}}}`)
	ctx := t.Context()
	a := p.client.Agent()
	_, err := a.Initialize(ctx, &v1unstable.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	p.clientTx.take()

	_, err = a.ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: "s1", Cwd: "/"})
	ce, ok := errors.AsType[*CapabilityError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, CapabilityError{Method: v1unstable.MethodSessionFork, Requires: "agentCapabilities.sessionCapabilities.fork"}, *ce)
	_, err = a.SetSessionTitle(ctx, &v1unstable.SetSessionTitleRequest{SessionID: "s1", Title: "t"})
	require.ErrorIs(t, err, ErrNotAdvertised)
	_, err = a.ListProviders(ctx, &v1unstable.ListProvidersRequest{})
	require.ErrorIs(t, err, ErrNotAdvertised)
	require.Empty(t, p.clientTx.take(), "refused calls must not be sent")

	// What was advertised, and the stable baseline, pass on this surface.
	_, err = a.ListSessions(ctx, &v1unstable.ListSessionsRequest{})
	require.ErrorIs(t, err, ErrMethodNotFound, "sent: the agent lacks the handler")
	_, err = a.NewSession(ctx, &v1unstable.NewSessionRequest{Cwd: "/", McpServers: []v1unstable.McpServer{}})
	require.NoError(t, err)
}

// TestSDK6_StrictUnstableAcceptsAdvertisedFork: advertised, the same calls
// go out, typed both ways, and the fork's setup response is learned like
// session/new's.
func TestSDK6_StrictUnstableAcceptsAdvertisedFork(t *testing.T) {
	p := newUnstablePair(t, `{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"fork":{},"title":{}}}}`)
	ctx := t.Context()
	a := p.client.Agent()
	res, err := a.Initialize(ctx, &v1unstable.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	require.NotNil(t, res.AgentCapabilities.SessionCapabilities.Fork, "the typed result is still decoded in strict mode")
	ns, err := a.NewSession(ctx, &v1unstable.NewSessionRequest{Cwd: "/", McpServers: []v1unstable.McpServer{}})
	require.NoError(t, err)
	fork, err := a.ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: ns.SessionID, Cwd: "/"})
	require.NoError(t, err)
	require.Equal(t, v1unstable.SessionID("s1-fork"), fork.SessionID)
	_, err = a.SetSessionTitle(ctx, &v1unstable.SetSessionTitleRequest{SessionID: fork.SessionID, Title: "forked"})
	require.NoError(t, err)
	require.Equal(t, "s1-fork: forked", <-p.impl.titles)
	// The fork's setup response offered no modes.
	_, err = a.SetSessionMode(ctx, &v1unstable.SetSessionModeRequest{SessionID: fork.SessionID, ModeID: "m"})
	require.ErrorIs(t, err, ErrNotAdvertised)
	_, err = a.SessionStatus(ctx, &v1unstable.SessionStatusRequest{SessionID: fork.SessionID})
	require.ErrorIs(t, err, ErrNotAdvertised)
}

// TestCapabilityTablesV1Unstable pins the unstable rows the stable table
// lacks, against raw capability messages.
func TestCapabilityTablesV1Unstable(t *testing.T) {
	spec := surface.SpecOf(v1unstable.Surface)
	strict := func(peerIsAgent bool) *strictState {
		return newStrictState(spec.Schema, peerIsAgent, spec.NewParams, spec.NewResult)
	}
	full := `{"protocolVersion":1,"agentCapabilities":{"providers":{},"auth":{"status":{}},
		"sessionCapabilities":{"fork":{},"title":{},"status":{},"archive":{}}}}`
	none := `{"protocolVersion":1,"agentCapabilities":{"providers":null,"sessionCapabilities":{"fork":null}}}`
	for _, r := range []struct{ method, requires string }{
		{v1unstable.MethodSessionFork, "agentCapabilities.sessionCapabilities.fork"},
		{v1unstable.MethodSessionSetTitle, "agentCapabilities.sessionCapabilities.title"},
		{v1unstable.MethodSessionStatus, "agentCapabilities.sessionCapabilities.status"},
		{v1unstable.MethodSessionArchive, "agentCapabilities.sessionCapabilities.archive"},
		{v1unstable.MethodSessionUnarchive, "agentCapabilities.sessionCapabilities.archive"},
		{v1unstable.MethodAuthStatus, "agentCapabilities.auth.status"},
		{v1unstable.MethodProvidersList, "agentCapabilities.providers"},
		{v1unstable.MethodProvidersSet, "agentCapabilities.providers"},
		{v1unstable.MethodProvidersDisable, "agentCapabilities.providers"},
	} {
		f, n := strict(true), strict(true)
		learn(t, f, methodInitialize, nil, full)
		learn(t, n, methodInitialize, nil, none)
		_, err := f.check(r.method, json.RawMessage(`{}`))
		require.NoError(t, err, r.method)
		_, err = n.check(r.method, json.RawMessage(`{}`))
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s: %v", r.method, err)
		require.Equal(t, r.requires, ce.Requires)
	}

	fullClient := `{"protocolVersion":1,"clientCapabilities":{"plan":{},"subagents":{}}}`
	noneClient := `{"protocolVersion":1,"clientCapabilities":{"plan":null}}`
	for _, r := range []struct{ kind, requires string }{
		{"plan_update", "clientCapabilities.plan"},
		{"plan_removed", "clientCapabilities.plan"},
		{"subagent_update", "clientCapabilities.subagents"},
		{"session_message", "clientCapabilities.subagents"},
		{"session_message_chunk", "clientCapabilities.subagents"},
		{"notice", "clientCapabilities.session.notices"},
	} {
		f, n := strict(false), strict(false)
		f.learnInitialize([]byte(fullClient))
		n.learnInitialize([]byte(noneClient))
		params := json.RawMessage(`{"update":{"sessionUpdate":"` + r.kind + `"}}`)
		_, err := n.check(v1unstable.MethodSessionUpdate, params)
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s: %v", r.kind, err)
		require.Equal(t, r.requires, ce.Requires)
		if r.kind != "notice" {
			_, err = f.check(v1unstable.MethodSessionUpdate, params)
			require.NoError(t, err, r.kind)
		}
	}
}
