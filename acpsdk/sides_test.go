package acpsdk

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/surface"
)

// minimalAgent implements only the required gen.Agent methods.
type minimalAgent struct {
	init string // initialize result JSON
}

func (a *minimalAgent) Initialize(ctx context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	var r gen.InitializeResponse
	err := json.Unmarshal([]byte(a.init), &r)
	return &r, err
}

func (a *minimalAgent) NewSession(ctx context.Context, p *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: "m1"}, nil
}

func (a *minimalAgent) Cancel(ctx context.Context, p *gen.CancelNotification) error { return nil }

func (a *minimalAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

// minimalClient implements only the required gen.Client methods; its
// permission handler waits for cancellation.
type minimalClient struct {
	asked chan struct{}
}

func (c *minimalClient) SessionUpdate(ctx context.Context, p *gen.SessionNotification) error {
	return nil
}

func (c *minimalClient) RequestPermission(ctx context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	close(c.asked)
	<-ctx.Done()
	return nil, ctx.Err()
}

type minimalPair struct {
	client   *ClientSide
	agent    *AgentSide
	clientTx lineLog
	agentTx  lineLog
}

func newMinimalPair(t *testing.T, agentInit string, clientStrict, agentStrict bool) (*minimalPair, *minimalClient) {
	t.Helper()
	p := &minimalPair{}
	mc := &minimalClient{asked: make(chan struct{})}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	p.agent = NewAgentSide(c2aR, a2cW, &minimalAgent{init: agentInit}, &SideOptions{Options: Options{Tap: p.agentTx.tap}, Strict: agentStrict})
	p.client = NewClientSide(a2cR, c2aW, mc, &SideOptions{Options: Options{Tap: p.clientTx.tap}, Strict: clientStrict})
	t.Cleanup(func() {
		require.NoError(t, p.client.Close())
		require.NoError(t, p.agent.Close())
	})
	return p, mc
}

// TestSDK7_PromptReturnsAfterItsUpdates: through the typed API, the prompt's
// answer arrives after the update the agent sent before it was handled.
func TestSDK7_PromptReturnsAfterItsUpdates(t *testing.T) {
	p := newSidePair(t, false, false)
	var req gen.PromptRequest
	require.NoError(t, json.Unmarshal([]byte(`{"sessionId":"s1","prompt":[{"type":"text","text":"Hello"}]}`), &req))
	res, err := p.client.Agent().Prompt(t.Context(), &req)
	require.NoError(t, err)
	require.Equal(t, gen.StopReasonEndTurn, res.StopReason)
	select {
	case u := <-p.fc.updates:
		chunk, ok := u.Update.(*gen.SessionUpdateAgentMessageChunk)
		require.True(t, ok, "%T", u.Update)
		text, ok := chunk.Content.(*gen.ContentBlockText)
		require.True(t, ok, "%T", chunk.Content)
		require.Equal(t, "Hi", text.Text)
	default:
		t.Fatal("prompt answered before its update was handled")
	}
}

// TestSDK10_MissingOptionalHandlerIsMethodNotFound: gen.ErrNotImplemented
// maps to -32601 both ways, and the connection goes on.
func TestSDK10_MissingOptionalHandlerIsMethodNotFound(t *testing.T) {
	p, _ := newMinimalPair(t, `{"protocolVersion":1}`, false, false)
	ctx := t.Context()
	_, err := p.client.Agent().LoadSession(ctx, &gen.LoadSessionRequest{SessionID: "s", Cwd: "/", McpServers: []gen.McpServer{}})
	require.ErrorIs(t, err, ErrMethodNotFound)
	_, err = p.agent.Client().ReadTextFile(ctx, &gen.ReadTextFileRequest{SessionID: "s", Path: "/a"})
	require.ErrorIs(t, err, ErrMethodNotFound)
	// Unknown extension request: -32601; unknown extension notification: ignored.
	require.ErrorIs(t, p.client.Call(ctx, "_acme/thing", map[string]int{}, nil), ErrMethodNotFound)
	require.NoError(t, p.client.Notify(ctx, "_acme/note", map[string]int{}))
	res, err := p.client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.Equal(t, gen.SessionID("m1"), res.SessionID)
}

// TestSDK10_BadParamsIsInvalidParamsWithPath: params that do not decode are
// answered -32602 with the failing JSON path in data.path.
func TestSDK10_BadParamsIsInvalidParamsWithPath(t *testing.T) {
	p, _ := newMinimalPair(t, `{"protocolVersion":1}`, false, false)
	ctx := t.Context()
	for _, tc := range []struct{ params, path string }{
		{`{"prompt":[]}`, "params.sessionId"},
		{`{"sessionId":"s","prompt":[{"type":"text"}]}`, "params.prompt[0].text"},
		{`{"sessionId":7,"prompt":[]}`, "params.sessionId"},
	} {
		err := p.client.Call(ctx, gen.MethodSessionPrompt, json.RawMessage(tc.params), nil)
		e, ok := errors.AsType[*Error](err)
		require.True(t, ok, "%v", err)
		require.Equal(t, CodeInvalidParams, e.Code, e.Message)
		var data struct{ Path string }
		require.NoError(t, json.Unmarshal(e.Data, &data))
		require.Equal(t, tc.path, data.Path, e.Message)
	}
}

// TestSDK10_UndecodableNotificationReported: a session/update whose params
// do not decode is reported with its *gen.DecodeError (the adapter's
// "malformed" event, EV-10) and the connection goes on.
func TestSDK10_UndecodableNotificationReported(t *testing.T) {
	failed := make(chan error, 1)
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	agent := NewAgentSide(c2aR, a2cW, &minimalAgent{init: `{"protocolVersion":1}`}, nil)
	client := NewClientSide(a2cR, c2aW, &minimalClient{}, &SideOptions{Options: Options{Observer: Observer{
		NotificationFailed: func(method string, err error) { failed <- err },
	}}})
	t.Cleanup(func() {
		require.NoError(t, client.Close())
		require.NoError(t, agent.Close())
	})
	require.NoError(t, agent.Notify(t.Context(), gen.MethodSessionUpdate, json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`)))
	err := await(t, failed)
	require.ErrorIs(t, err, ErrInvalidParams)
	de, ok := errors.AsType[*gen.DecodeError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "params.update.content", de.Path)
	require.ErrorIs(t, err, gen.ErrMissingField)
}

// TestSDK6_Extensions: extension calls and notifications reach an
// ExtensionHandler.
func TestSDK6_Extensions(t *testing.T) {
	p := newSidePair(t, true, true)
	ctx := t.Context()
	var res struct{ Echoed bool }
	require.NoError(t, p.client.Call(ctx, "_fake/echo", map[string]string{"a": "b"}, &res))
	require.True(t, res.Echoed)
	require.NoError(t, p.client.Notify(ctx, "_fake/note", map[string]int{"n": 1}))
	require.Equal(t, `{"n":1}`, await(t, p.fa.ext))
	require.ErrorIs(t, p.client.Call(ctx, "_fake/other", nil, nil), ErrMethodNotFound)
}

// TestSDK8_CancelRequestAgentToClient: an agent's cancelled call reaches the
// client handler's ctx, and the client still answers (-32800).
func TestSDK8_CancelRequestAgentToClient(t *testing.T) {
	p, mc := newMinimalPair(t, `{"protocolVersion":1}`, false, false)
	pc, err := p.agent.Go(t.Context(), gen.MethodSessionRequestPermission, &gen.RequestPermissionRequest{
		SessionID: "s", ToolCall: gen.ToolCallUpdate{ToolCallID: "c"}, Options: []gen.PermissionOption{},
	})
	require.NoError(t, err)
	await(t, mc.asked)
	pc.Cancel()
	require.ErrorIs(t, pc.Result(nil), ErrRequestCancelled)
	require.Contains(t, p.agentTx.take(), `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
}

const noCapsInit = `{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}`

// TestSDK6_StrictClientRefusesWithoutSending: strict mode refuses calls the
// agent did not advertise, and nothing reaches the wire.
func TestSDK6_StrictClientRefusesWithoutSending(t *testing.T) {
	p, _ := newMinimalPair(t, noCapsInit, true, false)
	ctx := t.Context()
	load := &gen.LoadSessionRequest{SessionID: "s", Cwd: "/", McpServers: []gen.McpServer{}}

	_, err := p.client.Agent().LoadSession(ctx, load)
	require.ErrorIs(t, err, ErrNotAdvertised, "before initialize nothing is advertised")
	_, err = p.client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	p.clientTx.take()

	_, err = p.client.Agent().LoadSession(ctx, load)
	ce, ok := errors.AsType[*CapabilityError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, CapabilityError{Method: gen.MethodSessionLoad, Requires: "agentCapabilities.loadSession"}, *ce)
	_, err = p.client.Go(ctx, gen.MethodSessionList, json.RawMessage(`{}`))
	require.ErrorIs(t, err, ErrNotAdvertised)
	_, err = p.client.Agent().SetSessionMode(ctx, &gen.SetSessionModeRequest{SessionID: "m1", ModeID: "x"})
	require.ErrorIs(t, err, ErrNotAdvertised)
	require.Empty(t, p.clientTx.take(), "refused calls must not be sent")

	// Baseline methods and extensions pass.
	_, err = p.client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.ErrorIs(t, p.client.Call(ctx, "_x/y", nil, nil), ErrMethodNotFound)
}

// TestSDK6_StrictClientAllowsAdvertised: the fake agent advertises
// loadSession, image prompts and modes on its sessions.
func TestSDK6_StrictClientAllowsAdvertised(t *testing.T) {
	p := newSidePair(t, true, false)
	ctx := t.Context()
	a := p.client.Agent()
	_, err := a.Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	_, err = a.LoadSession(ctx, &gen.LoadSessionRequest{SessionID: "s1", Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	_, err = a.ListSessions(ctx, &gen.ListSessionsRequest{})
	require.NoError(t, err)
	ns, err := a.NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.NotNil(t, ns.Modes, "the typed result is still decoded in strict mode")
	_, err = a.SetSessionMode(ctx, &gen.SetSessionModeRequest{SessionID: ns.SessionID, ModeID: "code"})
	require.NoError(t, err)
	_, err = a.SetSessionConfigOption(ctx, mustDecode[gen.SetSessionConfigOptionRequest](t, `{"sessionId":"s1","configId":"m","value":"v"}`))
	require.ErrorIs(t, err, ErrNotAdvertised, "the session's setup response had no configOptions")

	image := mustDecode[gen.PromptRequest](t, `{"sessionId":"s1","prompt":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`)
	res, err := a.Prompt(ctx, image)
	require.NoError(t, err)
	require.Equal(t, gen.StopReasonEndTurn, res.StopReason)
	audio := mustDecode[gen.PromptRequest](t, `{"sessionId":"s1","prompt":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`)
	_, err = a.Prompt(ctx, audio)
	ce, ok := errors.AsType[*CapabilityError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "agentCapabilities.promptCapabilities.audio", ce.Requires)
}

// TestSDK6_StrictAgentRefusesWithoutSending: the agent's calls are gated by
// the client's initialize capabilities.
func TestSDK6_StrictAgentRefusesWithoutSending(t *testing.T) {
	p, _ := newMinimalPair(t, noCapsInit, false, true)
	ctx := t.Context()
	_, err := p.client.Agent().Initialize(ctx, mustDecode[gen.InitializeRequest](t, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}`))
	require.NoError(t, err)
	p.agentTx.take() // the initialize answer
	c := p.agent.Client()
	_, err = c.WriteTextFile(ctx, &gen.WriteTextFileRequest{SessionID: "s", Path: "/a", Content: "x"})
	require.ErrorIs(t, err, ErrNotAdvertised)
	_, err = c.CreateTerminal(ctx, &gen.CreateTerminalRequest{SessionID: "s", Command: "ls"})
	require.ErrorIs(t, err, ErrNotAdvertised)
	err = c.SessionUpdate(ctx, mustDecode[gen.SessionNotification](t, `{"sessionId":"s","update":{"sessionUpdate":"notice","title":"hi","severity":"info"}}`))
	require.ErrorIs(t, err, ErrNotAdvertised)
	require.Empty(t, p.agentTx.take())
	// Advertised and baseline calls go out (the minimal client lacks fs: -32601).
	_, err = c.ReadTextFile(ctx, &gen.ReadTextFileRequest{SessionID: "s", Path: "/a"})
	require.ErrorIs(t, err, ErrMethodNotFound)
	require.NoError(t, c.SessionUpdate(ctx, mustDecode[gen.SessionNotification](t, `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`)))
}

func mustDecode[T any](t *testing.T, s string) *T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return &v
}

// TestCapabilityTables pins each row of the strict-mode tables
// (protocol.md §4) against raw capability messages.
func TestCapabilityTables(t *testing.T) {
	full := `{"protocolVersion":1,"authMethods":[{"id":"a","name":"A"}],"agentCapabilities":{"loadSession":true,
		"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},
		"sessionCapabilities":{"list":{},"delete":{},"resume":{},"close":{}},"auth":{"logout":{}}}}`
	none := `{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"list":null},"auth":{}}}`
	agentRows := []struct {
		method, params, requires string
	}{
		{gen.MethodAuthenticate, `{"methodId":"a"}`, "authMethods"},
		{gen.MethodLogout, `{}`, "agentCapabilities.auth.logout"},
		{gen.MethodSessionLoad, `{}`, "agentCapabilities.loadSession"},
		{gen.MethodSessionResume, `{}`, "agentCapabilities.sessionCapabilities.resume"},
		{gen.MethodSessionList, `{}`, "agentCapabilities.sessionCapabilities.list"},
		{gen.MethodSessionClose, `{}`, "agentCapabilities.sessionCapabilities.close"},
		{gen.MethodSessionDelete, `{}`, "agentCapabilities.sessionCapabilities.delete"},
		{gen.MethodSessionPrompt, `{"prompt":[{"type":"text"},{"type":"image"}]}`, "agentCapabilities.promptCapabilities.image"},
		{gen.MethodSessionPrompt, `{"prompt":[{"type":"audio"}]}`, "agentCapabilities.promptCapabilities.audio"},
		{gen.MethodSessionPrompt, `{"prompt":[{"type":"resource"}]}`, "agentCapabilities.promptCapabilities.embeddedContext"},
		{gen.MethodSessionSetMode, `{"sessionId":"s"}`, "modes in the session's setup response"},
		{gen.MethodSessionSetConfigOption, `{"sessionId":"s"}`, "configOptions in the session's setup response"},
	}
	for _, r := range agentRows {
		full2, none2 := stableStrict(true), stableStrict(true)
		learn(t, full2, gen.MethodInitialize, nil, full)
		learn(t, full2, gen.MethodSessionLoad, []byte(`{"sessionId":"s"}`), `{"modes":{"currentModeId":"a","availableModes":[]},"configOptions":[]}`)
		learn(t, none2, gen.MethodInitialize, nil, none)
		learn(t, none2, gen.MethodSessionNew, nil, `{"sessionId":"s"}`)
		_, err := full2.check(r.method, json.RawMessage(r.params))
		require.NoError(t, err, r.method)
		_, err = none2.check(r.method, json.RawMessage(r.params))
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s %s: %v", r.method, r.params, err)
		require.Equal(t, r.requires, ce.Requires)
	}
	for _, m := range []string{gen.MethodInitialize, gen.MethodSessionNew, gen.MethodSessionCancel, "_x/y"} {
		none2 := stableStrict(true)
		_, err := none2.check(m, json.RawMessage(`{}`))
		require.NoError(t, err, "%s is baseline", m)
	}

	fullClient := `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,
		"session":{"notices":{},"compaction":{}},"elicitation":{"form":{},"url":{}}}}`
	noneClient := `{"protocolVersion":1,"clientCapabilities":{"session":null,"elicitation":{"form":null}}}`
	clientRows := []struct {
		method, params, requires string
	}{
		{gen.MethodFsReadTextFile, `{}`, "clientCapabilities.fs.readTextFile"},
		{gen.MethodFsWriteTextFile, `{}`, "clientCapabilities.fs.writeTextFile"},
		{gen.MethodTerminalCreate, `{}`, "clientCapabilities.terminal"},
		{gen.MethodTerminalOutput, `{}`, "clientCapabilities.terminal"},
		{gen.MethodTerminalWaitForExit, `{}`, "clientCapabilities.terminal"},
		{gen.MethodTerminalKill, `{}`, "clientCapabilities.terminal"},
		{gen.MethodTerminalRelease, `{}`, "clientCapabilities.terminal"},
		{gen.MethodElicitationCreate, `{"mode":"form"}`, "clientCapabilities.elicitation.form"},
		{gen.MethodElicitationCreate, `{"mode":"url"}`, "clientCapabilities.elicitation.url"},
		{gen.MethodElicitationCreate, `{"mode":"_custom"}`, "clientCapabilities.elicitation"},
		{gen.MethodElicitationComplete, `{}`, "clientCapabilities.elicitation.url"},
		{gen.MethodSessionUpdate, `{"update":{"sessionUpdate":"notice"}}`, "clientCapabilities.session.notices"},
		{gen.MethodSessionUpdate, `{"update":{"sessionUpdate":"compaction_update"}}`, "clientCapabilities.session.compaction"},
		{gen.MethodSessionUpdate, `{"update":{"sessionUpdate":"compaction_summary_chunk"}}`, "clientCapabilities.session.compaction"},
	}
	for _, r := range clientRows {
		full2, none2 := stableStrict(false), stableStrict(false)
		full2.learnInitialize([]byte(fullClient))
		none2.learnInitialize([]byte(noneClient))
		_, err := full2.check(r.method, json.RawMessage(r.params))
		require.NoError(t, err, r.method)
		_, err = none2.check(r.method, json.RawMessage(r.params))
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s %s: %v", r.method, r.params, err)
		require.Equal(t, r.requires, ce.Requires)
	}
	for _, m := range []string{gen.MethodSessionRequestPermission, gen.MethodSessionUpdate} {
		none2 := stableStrict(false)
		_, err := none2.check(m, json.RawMessage(`{"update":{"sessionUpdate":"plan"}}`))
		require.NoError(t, err, "%s is baseline", m)
	}
	// A capability message that does not decode advertises nothing.
	bad := stableStrict(true)
	_, err := bad.learnAnswer(gen.MethodInitialize, nil, []byte(`{"agentCapabilities":{"loadSession":"yes"}}`))
	require.Error(t, err)
	_, err = bad.check(gen.MethodSessionLoad, nil)
	require.ErrorIs(t, err, ErrNotAdvertised)
}

// stableStrict is strict mode's state for a stable v1 side.
func stableStrict(peerIsAgent bool) *strictState {
	spec := surface.SpecOf(gen.Surface)
	return newStrictState(spec.Schema, peerIsAgent, spec.NewParams, spec.NewResult)
}

// learn feeds st the answer to one call of method.
func learn(t *testing.T, st *strictState, method string, params []byte, result string) {
	t.Helper()
	_, err := st.learnAnswer(method, params, []byte(result))
	require.NoError(t, err, "%s result %s", method, result)
}
