package refagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// LatestProtocolVersion is the only protocol version the agent speaks: the
// one the SDK's pinned schema describes.
const LatestProtocolVersion = gen.LatestProtocolVersion

// errExited ends a turn whose process was told to exit, when the exit
// func returned (it does only in tests).
var errExited = errors.New("refagent: exited mid-turn")

// ForeignSessionID is the session id the "foreign" word sends updates for.
const ForeignSessionID = "refagent-foreign-session"

// UnknownClientMethod is the method the "call-unknown" word calls.
const UnknownClientMethod = "refagent/unknown_method"

// Agent is the reference agent's protocol logic on an acpsdk agent side.
type Agent struct {
	ctx   context.Context // ends when the agent stops
	opts  Options
	t     *transport
	log   *slog.Logger
	exit  func(int)
	store *store

	stopTurns context.CancelFunc // cancels ctx

	mu            sync.Mutex
	clientCaps    gen.ClientCapabilities // what initialize offered
	authenticated bool                   // authenticate succeeded on this connection
	turns         map[string]*turn       // running turn per session id
	// pendingCancel and broken are per-session cancellation faults
	// (--sticky-cancel, --stuck-after-cancel).
	pendingCancel map[string]bool
	broken        map[string]bool
	inflight      int           // handlers running
	idle          chan struct{} // closed when inflight drops to 0, if drain waits
}

func (a *Agent) handlerStarted() {
	a.mu.Lock()
	a.inflight++
	a.mu.Unlock()
}

func (a *Agent) handlerEnded() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inflight--; a.inflight == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// drain ends the turns in flight and waits, at most d in all, for the
// handlers running to finish and for everything queued to be written. (A
// handler whose goroutine the connection started but which has not yet
// entered Handle is not waited for; the window is a goroutine start.)
func (a *Agent) drain(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	a.stopTurns()
	a.mu.Lock()
	var idle chan struct{}
	if a.inflight > 0 {
		a.idle = make(chan struct{})
		idle = a.idle
	}
	a.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	_ = a.t.conn.Flush(ctx)
}

// typedAgent is Agent seen through the generated handler interfaces
// (gen.Agent plus the optional session lifecycle handlers) that the agent
// side dispatches to; the methods live on a separate type so the wire
// methods stay apart from Agent's own bookkeeping.
type typedAgent Agent

var (
	_ gen.Agent                         = (*typedAgent)(nil)
	_ gen.LoadSessionHandler            = (*typedAgent)(nil)
	_ gen.ResumeSessionHandler          = (*typedAgent)(nil)
	_ gen.CloseSessionHandler           = (*typedAgent)(nil)
	_ gen.DeleteSessionHandler          = (*typedAgent)(nil)
	_ gen.AuthenticateHandler           = (*typedAgent)(nil)
	_ gen.ListSessionsHandler           = (*typedAgent)(nil)
	_ gen.SetSessionModeHandler         = (*typedAgent)(nil)
	_ gen.SetSessionConfigOptionHandler = (*typedAgent)(nil)
)

// turn is a running prompt turn.
type turn struct {
	cancelled chan struct{}
	once      sync.Once
}

func (t *turn) cancel() { t.once.Do(func() { close(t.cancelled) }) }

func (t *turn) isCancelled() bool {
	select {
	case <-t.cancelled:
		return true
	default:
		return false
	}
}

func newAgent(ctx context.Context, stop context.CancelFunc, opts Options, log *slog.Logger, exit func(int)) *Agent {
	return &Agent{ctx: ctx, stopTurns: stop, opts: opts, log: log, exit: exit, store: newStore(opts.StateDir),
		turns: map[string]*turn{}, pendingCancel: map[string]bool{}, broken: map[string]bool{}}
}

// advertised reports whether a method's capability, if it has one, is
// advertised.
func (a *Agent) advertised(method string) bool {
	switch method {
	case gen.MethodSessionLoad:
		return a.opts.LoadSession
	case gen.MethodSessionResume:
		return a.opts.Resume
	case gen.MethodSessionClose:
		return a.opts.Close
	case gen.MethodSessionDelete:
		return a.opts.Delete
	case gen.MethodSessionList:
		return a.opts.List
	case gen.MethodSessionSetMode:
		return a.opts.Modes
	case gen.MethodSessionSetConfigOption:
		return a.opts.ConfigOptions
	}
	return true
}

// notImplemented answers a method whose capability is not advertised the
// way an unknown method is answered.
func (a *Agent) notImplemented(method string) error {
	return errorf(int64(a.opts.UnknownMethodCode), "method not found: %s", method)
}

// Initialize answers with the version and capabilities the flags choose.
func (ta *typedAgent) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	a := (*Agent)(ta)
	if a.opts.FailInitialize != 0 {
		return nil, failure(a.opts.FailInitialize)
	}
	version := LatestProtocolVersion
	switch {
	case a.opts.EchoProtocolVersion:
		version = p.ProtocolVersion
	case a.opts.ProtocolVersion >= 0:
		version = gen.ProtocolVersion(a.opts.ProtocolVersion)
	}
	a.log.Info("initialize", "requested", p.ProtocolVersion, "answered", version)
	a.mu.Lock()
	a.clientCaps = p.ClientCapabilities
	a.mu.Unlock()
	var caps gen.AgentCapabilities
	caps.LoadSession = a.opts.LoadSession
	caps.PromptCapabilities = gen.PromptCapabilities{Image: a.opts.PromptImage, Audio: a.opts.PromptAudio, EmbeddedContext: a.opts.PromptEmbedded}
	caps.McpCapabilities.HTTP = a.opts.MCPHTTP
	if a.opts.Resume {
		caps.SessionCapabilities.Resume = &gen.SessionResumeCapabilities{}
	}
	if a.opts.Close {
		caps.SessionCapabilities.Close = &gen.SessionCloseCapabilities{}
	}
	if a.opts.Delete {
		caps.SessionCapabilities.Delete = &gen.SessionDeleteCapabilities{}
	}
	if a.opts.List {
		caps.SessionCapabilities.List = &gen.SessionListCapabilities{}
	}
	r := &gen.InitializeResponse{ProtocolVersion: version, AgentCapabilities: caps, AuthMethods: a.authMethods()}
	if !a.opts.NoAgentInfo {
		r.AgentInfo = &gen.Implementation{Name: a.opts.AgentName, Version: a.opts.AgentVersion}
	}
	return r, nil
}

// malformedInitialize is the --malformed-capabilities answer, which no
// typed value can express.
func (a *Agent) malformedInitialize() map[string]any {
	return map[string]any{
		"protocolVersion": LatestProtocolVersion,
		"agentCapabilities": map[string]any{
			"loadSession":         "yes",
			"sessionCapabilities": map[string]any{"resume": true},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]any{"name": a.opts.AgentName, "version": a.opts.AgentVersion},
	}
}

// failure builds the error a --fail-* or --prompt-error flag asks for, with
// the message a real runtime would give for that code.
func failure(code int) *acpsdk.Error {
	c := int64(code)
	switch {
	case c == acpsdk.CodeAuthRequired:
		return errorf(c, "authentication required")
	case c >= 400 && c <= 599:
		return errorf(c, "model backend unavailable (status %d)", c)
	default:
		return errorf(c, "refagent: failing on request")
	}
}

// withData puts a cause in e's data when asked ("error-data"), as Qwen Code
// does: {"details":"401 …"} beside a generic message.
func withData(e *acpsdk.Error, asked bool) *acpsdk.Error {
	if asked {
		e.Data = json.RawMessage(fmt.Sprintf(`{"details":"%d Incorrect API key provided"}`, e.Code))
	}
	return e
}

// Cancel ends the session's running turn, if any.
func (ta *typedAgent) Cancel(_ context.Context, p *gen.CancelNotification) error {
	a := (*Agent)(ta)
	sid := string(p.SessionID)
	a.mu.Lock()
	t := a.turns[sid]
	if t == nil && a.opts.StickyCancel {
		a.pendingCancel[sid] = true
	}
	a.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	a.log.Info("cancel received", "session_id", sid, "turn_running", t != nil)
	return nil
}

// NewSession creates "sess-N", with --chatty notifications around it.
func (ta *typedAgent) NewSession(ctx context.Context, p *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	a := (*Agent)(ta)
	if err := a.requireAuth(); err != nil {
		return nil, err
	}
	if a.opts.FailNewSession != 0 {
		return nil, failure(a.opts.FailNewSession)
	}
	if a.opts.Chatty {
		// A vendor notification without a session id before the session
		// exists, as some runtimes send.
		if err := a.t.side.Notify(ctx, "_refagent/status", map[string]any{"state": "creating session"}); err != nil {
			return nil, err
		}
	}
	s, err := a.store.create(p.Cwd)
	if err != nil {
		return nil, errorf(acpsdk.CodeInternalError, "creating session: %v", err)
	}
	a.log.Info("session created", "session_id", s.ID)
	if a.opts.Chatty {
		addAfter(ctx, update(s.ID, map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{
			map[string]any{"name": "refagent-help", "description": "List the reference agent's prompt words"},
		}}))
	}
	return &gen.NewSessionResponse{SessionID: gen.SessionID(s.ID), Modes: a.modeState(s), ConfigOptions: a.configOptions(s)}, nil
}

// LoadSession replays the conversation, then responds (or the reverse
// with --load-replay-after-response).
func (ta *typedAgent) LoadSession(ctx context.Context, p *gen.LoadSessionRequest) (*gen.LoadSessionResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.LoadSession {
		return nil, a.notImplemented(gen.MethodSessionLoad)
	}
	if err := a.continueSession(ctx, gen.MethodSessionLoad, string(p.SessionID), !a.opts.LoadReplayAfterResponse, a.opts.LoadReplayAfterResponse); err != nil {
		return nil, err
	}
	return &gen.LoadSessionResponse{}, nil
}

// ResumeSession responds without replaying (unless --resume-replays).
func (ta *typedAgent) ResumeSession(ctx context.Context, p *gen.ResumeSessionRequest) (*gen.ResumeSessionResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.Resume {
		return nil, a.notImplemented(gen.MethodSessionResume)
	}
	if err := a.continueSession(ctx, gen.MethodSessionResume, string(p.SessionID), a.opts.ResumeReplays, false); err != nil {
		return nil, err
	}
	return &gen.ResumeSessionResponse{}, nil
}

// continueSession serves session/load and session/resume: replayBefore
// replays the conversation before the response, replayAfter after it.
func (a *Agent) continueSession(ctx context.Context, method, sid string, replayBefore, replayAfter bool) error {
	if err := a.requireAuth(); err != nil {
		return err
	}
	s, ok := a.store.get(sid)
	if !ok {
		return errorf(acpsdk.CodeResourceNotFound, "session not found: %s", sid)
	}
	history := a.store.history(s)
	replay := replayOf(s.ID, history)
	if replayBefore {
		if err := a.t.write(ctx, replay...); err != nil {
			return err
		}
	}
	if replayAfter {
		addAfter(ctx, replay...)
	}
	a.log.Info("session continued", "method", method, "session_id", s.ID, "exchanges", len(history))
	return nil
}

func replayOf(sid string, history []Exchange) []any {
	var out []any
	for i, x := range history {
		out = append(out,
			update(sid, chunk(gen.SessionUpdateUserMessageChunkTag, fmt.Sprintf("%s-u%d", sid, i+1), x.User)),
			update(sid, chunk(gen.SessionUpdateAgentMessageChunkTag, fmt.Sprintf("%s-a%d", sid, i+1), x.Agent)))
	}
	return out
}

// CloseSession cancels the session's turn and forgets it.
func (ta *typedAgent) CloseSession(_ context.Context, p *gen.CloseSessionRequest) (*gen.CloseSessionResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.Close {
		return nil, a.notImplemented(gen.MethodSessionClose)
	}
	if a.opts.FailClose {
		return nil, errorf(acpsdk.CodeInternalError, "refagent: failing on request")
	}
	sid := string(p.SessionID)
	a.cancelTurn(sid) // closing a session cancels its turn
	if a.opts.CloseKeepsSession {
		if _, ok := a.store.get(sid); ok {
			a.log.Warn("closing in name only (--close-keeps-session)", "session_id", sid)
			return &gen.CloseSessionResponse{}, nil
		}
	}
	if !a.store.forget(sid) {
		return nil, errorf(acpsdk.CodeResourceNotFound, "session not found: %s", sid)
	}
	return &gen.CloseSessionResponse{}, nil
}

// DeleteSession removes the session everywhere; unknown ids succeed.
func (ta *typedAgent) DeleteSession(_ context.Context, p *gen.DeleteSessionRequest) (*gen.DeleteSessionResponse, error) {
	a := (*Agent)(ta)
	if !a.opts.Delete {
		return nil, a.notImplemented(gen.MethodSessionDelete)
	}
	if a.opts.FailDelete {
		return nil, errorf(acpsdk.CodeInternalError, "refagent: failing on request")
	}
	sid := string(p.SessionID)
	a.cancelTurn(sid)
	if _, ok := a.store.get(sid); !ok && a.opts.DeleteStrict {
		return nil, errorf(acpsdk.CodeResourceNotFound, "session not found: %s", sid)
	}
	// Deleting an unknown id succeeds silently.
	if err := a.store.remove(sid); err != nil {
		return nil, errorf(acpsdk.CodeInternalError, "deleting session: %v", err)
	}
	return &gen.DeleteSessionResponse{}, nil
}

func (a *Agent) cancelTurn(sid string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.turns[sid]; t != nil {
		t.cancel()
	}
}

// record appends the MCP servers a session request carried, exactly as
// received, to the --record-mcp file, so tests can read them back.
func (a *Agent) record(method string, params json.RawMessage, result any) {
	if a.opts.RecordMCP == "" {
		return
	}
	switch method {
	case gen.MethodSessionNew, gen.MethodSessionLoad, gen.MethodSessionResume:
	default:
		return
	}
	var p struct {
		SessionID  string          `json:"sessionId"`
		Cwd        string          `json:"cwd"`
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	_ = json.Unmarshal(params, &p) // already decoded once by the typed layer
	if r, ok := result.(*gen.NewSessionResponse); ok {
		p.SessionID = string(r.SessionID)
	}
	if p.MCPServers == nil {
		p.MCPServers = json.RawMessage("null")
	}
	if err := appendJSONLine(a.opts.RecordMCP, Record{Method: method, SessionID: p.SessionID, Cwd: p.Cwd, MCPServers: p.MCPServers}); err != nil {
		a.log.Error("recording MCP servers", "error", err)
	}
}

// Record is one line of the --record-mcp file.
type Record struct {
	Method     string          `json:"method"`
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

func update(sessionID string, u map[string]any) map[string]any {
	return notification(gen.MethodSessionUpdate, map[string]any{"sessionId": sessionID, "update": u})
}

func chunk(kind, messageID, text string) map[string]any {
	return map[string]any{
		"sessionUpdate": kind,
		"messageId":     messageID,
		"content":       map[string]any{"type": gen.ContentBlockTextTag, "text": text},
	}
}

// slowTick is how often a slow turn reports progress.
const slowTick = 100 * time.Millisecond

// clip shortens s for log records.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
