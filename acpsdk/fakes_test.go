package acpsdk

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// canned results for every method, valid against the pinned schema.
var canned = map[string]string{
	gen.MethodInitialize:               `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true},"sessionCapabilities":{"list":{},"close":{},"delete":{},"resume":{}},"auth":{"logout":{}}},"authMethods":[{"id":"token","name":"Token"}],"agentInfo":{"name":"fake-agent","version":"1.0.0"}}`,
	gen.MethodAuthenticate:             `{}`,
	gen.MethodLogout:                   `{}`,
	gen.MethodSessionNew:               `{"sessionId":"s1","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code"}]}}`,
	gen.MethodSessionLoad:              `{}`,
	gen.MethodSessionResume:            `{}`,
	gen.MethodSessionList:              `{"sessions":[{"sessionId":"s1","cwd":"/work","title":"first"}],"nextCursor":"c2"}`,
	gen.MethodSessionClose:             `{}`,
	gen.MethodSessionDelete:            `{}`,
	gen.MethodSessionSetMode:           `{}`,
	gen.MethodSessionSetConfigOption:   `{"configOptions":[]}`,
	gen.MethodSessionPrompt:            `{"stopReason":"end_turn"}`,
	gen.MethodSessionRequestPermission: `{"outcome":{"outcome":"selected","optionId":"allow"}}`,
	gen.MethodFsReadTextFile:           `{"content":"hello\n"}`,
	gen.MethodFsWriteTextFile:          `{}`,
	gen.MethodTerminalCreate:           `{"terminalId":"t1"}`,
	gen.MethodTerminalOutput:           `{"output":"ok\n","truncated":false,"exitStatus":{"exitCode":0}}`,
	gen.MethodTerminalWaitForExit:      `{"exitCode":0}`,
	gen.MethodTerminalKill:             `{}`,
	gen.MethodTerminalRelease:          `{}`,
	gen.MethodElicitationCreate:        `{"action":"cancel"}`,
	"_fake/echo":                       `{"echoed":true}`,
}

func cannedResult[R any](t testing.TB, method string) (*R, error) {
	var r R
	if err := json.Unmarshal([]byte(canned[method]), &r); err != nil {
		t.Errorf("canned %s result does not decode: %v", method, err)
		return nil, err
	}
	return &r, nil
}

// fakeAgent implements gen.Agent and every optional agent handler with
// canned answers. session/prompt streams an update and asks permission;
// session/load replays two updates; a prompt on session "wait" waits for
// cancellation.
type fakeAgent struct {
	t         testing.TB
	side      *AgentSide
	cancelled chan string // session/cancel notifications
	ext       chan string // extension notifications
}

func newFakeAgent(t testing.TB) *fakeAgent {
	return &fakeAgent{t: t, cancelled: make(chan string, 16), ext: make(chan string, 16)}
}

func (a *fakeAgent) Initialize(ctx context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return cannedResult[gen.InitializeResponse](a.t, gen.MethodInitialize)
}

func (a *fakeAgent) NewSession(ctx context.Context, p *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return cannedResult[gen.NewSessionResponse](a.t, gen.MethodSessionNew)
}

func (a *fakeAgent) Cancel(ctx context.Context, p *gen.CancelNotification) error {
	a.cancelled <- string(p.SessionID)
	return nil
}

func (a *fakeAgent) update(ctx context.Context, sid gen.SessionID, raw string) error {
	var n gen.SessionNotification
	if err := json.Unmarshal([]byte(`{"sessionId":"`+string(sid)+`","update":`+raw+`}`), &n); err != nil {
		return err
	}
	return a.side.Client().SessionUpdate(ctx, &n)
}

func (a *fakeAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	if p.SessionID == "wait" {
		<-ctx.Done()
		return &gen.PromptResponse{StopReason: gen.StopReasonCancelled}, nil
	}
	if err := a.update(ctx, p.SessionID, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}`); err != nil {
		return nil, err
	}
	var req gen.RequestPermissionRequest
	if err := json.Unmarshal([]byte(`{"sessionId":"`+string(p.SessionID)+`","toolCall":{"toolCallId":"call1","title":"Write file"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"deny","name":"Deny","kind":"reject_once"}]}`), &req); err != nil {
		return nil, err
	}
	if _, err := a.side.Client().RequestPermission(ctx, &req); err != nil {
		return nil, err
	}
	return cannedResult[gen.PromptResponse](a.t, gen.MethodSessionPrompt)
}

func (a *fakeAgent) Authenticate(ctx context.Context, p *gen.AuthenticateRequest) (*gen.AuthenticateResponse, error) {
	return cannedResult[gen.AuthenticateResponse](a.t, gen.MethodAuthenticate)
}

func (a *fakeAgent) Logout(ctx context.Context, p *gen.LogoutRequest) (*gen.LogoutResponse, error) {
	return cannedResult[gen.LogoutResponse](a.t, gen.MethodLogout)
}

func (a *fakeAgent) LoadSession(ctx context.Context, p *gen.LoadSessionRequest) (*gen.LoadSessionResponse, error) {
	for _, u := range []string{
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"Hello"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}`,
	} {
		if err := a.update(ctx, p.SessionID, u); err != nil {
			return nil, err
		}
	}
	return cannedResult[gen.LoadSessionResponse](a.t, gen.MethodSessionLoad)
}

func (a *fakeAgent) ResumeSession(ctx context.Context, p *gen.ResumeSessionRequest) (*gen.ResumeSessionResponse, error) {
	return cannedResult[gen.ResumeSessionResponse](a.t, gen.MethodSessionResume)
}

func (a *fakeAgent) ListSessions(ctx context.Context, p *gen.ListSessionsRequest) (*gen.ListSessionsResponse, error) {
	return cannedResult[gen.ListSessionsResponse](a.t, gen.MethodSessionList)
}

func (a *fakeAgent) CloseSession(ctx context.Context, p *gen.CloseSessionRequest) (*gen.CloseSessionResponse, error) {
	return cannedResult[gen.CloseSessionResponse](a.t, gen.MethodSessionClose)
}

func (a *fakeAgent) DeleteSession(ctx context.Context, p *gen.DeleteSessionRequest) (*gen.DeleteSessionResponse, error) {
	return cannedResult[gen.DeleteSessionResponse](a.t, gen.MethodSessionDelete)
}

func (a *fakeAgent) SetSessionMode(ctx context.Context, p *gen.SetSessionModeRequest) (*gen.SetSessionModeResponse, error) {
	return cannedResult[gen.SetSessionModeResponse](a.t, gen.MethodSessionSetMode)
}

func (a *fakeAgent) SetSessionConfigOption(ctx context.Context, p *gen.SetSessionConfigOptionRequest) (*gen.SetSessionConfigOptionResponse, error) {
	return cannedResult[gen.SetSessionConfigOptionResponse](a.t, gen.MethodSessionSetConfigOption)
}

func (a *fakeAgent) HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == "_fake/echo" {
		return json.RawMessage(canned[method]), nil
	}
	if method == "_fake/note" {
		a.ext <- string(params)
		return nil, nil
	}
	return nil, ErrMethodNotFound
}

// fakeClient implements gen.Client and every optional client handler.
type fakeClient struct {
	t        testing.TB
	updates  chan *gen.SessionNotification
	complete chan string
}

func newFakeClient(t testing.TB) *fakeClient {
	return &fakeClient{t: t, updates: make(chan *gen.SessionNotification, 64), complete: make(chan string, 4)}
}

func (c *fakeClient) SessionUpdate(ctx context.Context, p *gen.SessionNotification) error {
	c.updates <- p
	return nil
}

func (c *fakeClient) RequestPermission(ctx context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return cannedResult[gen.RequestPermissionResponse](c.t, gen.MethodSessionRequestPermission)
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p *gen.ReadTextFileRequest) (*gen.ReadTextFileResponse, error) {
	return cannedResult[gen.ReadTextFileResponse](c.t, gen.MethodFsReadTextFile)
}

func (c *fakeClient) WriteTextFile(ctx context.Context, p *gen.WriteTextFileRequest) (*gen.WriteTextFileResponse, error) {
	return cannedResult[gen.WriteTextFileResponse](c.t, gen.MethodFsWriteTextFile)
}

func (c *fakeClient) CreateTerminal(ctx context.Context, p *gen.CreateTerminalRequest) (*gen.CreateTerminalResponse, error) {
	return cannedResult[gen.CreateTerminalResponse](c.t, gen.MethodTerminalCreate)
}

func (c *fakeClient) TerminalOutput(ctx context.Context, p *gen.TerminalOutputRequest) (*gen.TerminalOutputResponse, error) {
	return cannedResult[gen.TerminalOutputResponse](c.t, gen.MethodTerminalOutput)
}

func (c *fakeClient) WaitForTerminalExit(ctx context.Context, p *gen.WaitForTerminalExitRequest) (*gen.WaitForTerminalExitResponse, error) {
	return cannedResult[gen.WaitForTerminalExitResponse](c.t, gen.MethodTerminalWaitForExit)
}

func (c *fakeClient) KillTerminal(ctx context.Context, p *gen.KillTerminalRequest) (*gen.KillTerminalResponse, error) {
	return cannedResult[gen.KillTerminalResponse](c.t, gen.MethodTerminalKill)
}

func (c *fakeClient) ReleaseTerminal(ctx context.Context, p *gen.ReleaseTerminalRequest) (*gen.ReleaseTerminalResponse, error) {
	return cannedResult[gen.ReleaseTerminalResponse](c.t, gen.MethodTerminalRelease)
}

func (c *fakeClient) CreateElicitation(ctx context.Context, p *gen.CreateElicitationRequest) (*gen.CreateElicitationResponse, error) {
	return cannedResult[gen.CreateElicitationResponse](c.t, gen.MethodElicitationCreate)
}

func (c *fakeClient) CompleteElicitation(ctx context.Context, p *gen.CompleteElicitationNotification) error {
	c.complete <- string(p.ElicitationID)
	return nil
}

// lineLog records one side's outgoing lines through the wire tap.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) tap(d Direction, line []byte) {
	if d != DirectionOut {
		return
	}
	l.mu.Lock()
	l.lines = append(l.lines, string(line))
	l.mu.Unlock()
}

func (l *lineLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// sidePair is a ClientSide and an AgentSide connected by pipes.
type sidePair struct {
	client   *ClientSide
	agent    *AgentSide
	fc       *fakeClient
	fa       *fakeAgent
	clientTx lineLog // lines the client wrote
	agentTx  lineLog // lines the agent wrote
}

func newSidePair(t testing.TB, clientStrict, agentStrict bool) *sidePair {
	t.Helper()
	p := &sidePair{fc: newFakeClient(t), fa: newFakeAgent(t)}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	p.agent = NewAgentSide(c2aR, a2cW, p.fa, &SideOptions{Options: Options{Tap: p.agentTx.tap}, Strict: agentStrict})
	p.fa.side = p.agent
	p.client = NewClientSide(a2cR, c2aW, p.fc, &SideOptions{Options: Options{Tap: p.clientTx.tap}, Strict: clientStrict})
	t.Cleanup(func() {
		require.NoError(t, p.client.Close())
		require.NoError(t, p.agent.Close())
	})
	return p
}
