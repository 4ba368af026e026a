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
)

// LatestProtocolVersion is the only protocol version the agent speaks.
const LatestProtocolVersion = 1

// errExited ends a turn whose process was told to exit, when the exit
// func returned (it does only in tests).
var errExited = errors.New("refagent: exited mid-turn")

// ForeignSessionID is the session id the "foreign" word sends updates for.
const ForeignSessionID = "refagent-foreign-session"

// UnknownClientMethod is the method the "call-unknown" word calls.
const UnknownClientMethod = "refagent/unknown_method"

// Agent is the reference agent's protocol logic, independent of its
// process.
type Agent struct {
	opts  Options
	c     *conn
	log   *slog.Logger
	exit  func(int)
	store *store

	mu    sync.Mutex
	turns map[string]*turn // running turn per session id
}

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

func newAgent(opts Options, c *conn, log *slog.Logger, exit func(int)) *Agent {
	return &Agent{opts: opts, c: c, log: log, exit: exit, store: newStore(opts.StateDir), turns: map[string]*turn{}}
}

func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return errorf(-32602, "invalid params: missing")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errorf(-32602, "invalid params: %v", err)
	}
	return nil
}

func (a *Agent) request(ctx context.Context, method string, params json.RawMessage) (reply, error) {
	switch method {
	case "initialize":
		return a.initialize(params)
	case "session/new":
		return a.newSession(params)
	case "session/load":
		if a.opts.LoadSession {
			return a.continueSession(method, params, !a.opts.LoadReplayAfterResponse, a.opts.LoadReplayAfterResponse)
		}
	case "session/resume":
		if a.opts.Resume {
			return a.continueSession(method, params, a.opts.ResumeReplays, false)
		}
	case "session/close":
		if a.opts.Close {
			return a.closeSession(params, a.opts.FailClose, false)
		}
	case "session/delete":
		if a.opts.Delete {
			return a.closeSession(params, a.opts.FailDelete, true)
		}
	case "session/prompt":
		return a.prompt(ctx, params)
	}
	return reply{}, errorf(a.opts.UnknownMethodCode, "method not found: %s", method)
}

func (a *Agent) notification(method string, params json.RawMessage) {
	switch method {
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(params, &p) != nil {
			a.log.Warn("undecodable session/cancel", "params", string(params))
			return
		}
		a.mu.Lock()
		t := a.turns[p.SessionID]
		a.mu.Unlock()
		if t != nil {
			t.cancel()
		}
		a.log.Info("cancel received", "session_id", p.SessionID, "turn_running", t != nil)
	case "$/cancel_request":
		// Every request this agent serves is short or is a prompt turn,
		// which session/cancel ends; nothing to abort.
	default:
		a.log.Info("ignoring notification", "method", method)
		if a.opts.AnswerNotifications {
			_ = a.c.writeLines(errorResponse(nullID, errorf(-32601, "method not found: %s", method)))
		}
	}
}

func (a *Agent) garbage(line []byte) bool {
	a.log.Warn("line is not JSON", "bytes", len(line))
	if a.opts.DieOnGarbage {
		a.exit(3)
		return false
	}
	return true
}

func (a *Agent) initialize(params json.RawMessage) (reply, error) {
	var p struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
	if err := decodeParams(params, &p); err != nil {
		return reply{}, err
	}
	if p.ProtocolVersion == nil {
		return reply{}, errorf(-32602, "invalid params: protocolVersion is required")
	}
	if a.opts.FailInitialize != 0 {
		return reply{}, failure(a.opts.FailInitialize)
	}
	version := LatestProtocolVersion
	if a.opts.ProtocolVersion >= 0 {
		version = a.opts.ProtocolVersion
	}
	session := map[string]any{}
	if a.opts.Resume {
		session["resume"] = map[string]any{}
	}
	if a.opts.Close {
		session["close"] = map[string]any{}
	}
	if a.opts.Delete {
		session["delete"] = map[string]any{}
	}
	caps := map[string]any{
		"loadSession":         a.opts.LoadSession,
		"promptCapabilities":  map[string]any{"image": false, "audio": false, "embeddedContext": false},
		"mcpCapabilities":     map[string]any{"http": a.opts.MCPHTTP, "sse": false},
		"sessionCapabilities": session,
	}
	if a.opts.MalformedCapabilities {
		caps["loadSession"] = "yes"
		caps["sessionCapabilities"] = map[string]any{"resume": true}
	}
	result := map[string]any{"protocolVersion": version, "agentCapabilities": caps, "authMethods": []any{}}
	if !a.opts.NoAgentInfo {
		result["agentInfo"] = map[string]any{"name": a.opts.AgentName, "version": a.opts.AgentVersion}
	}
	return reply{result: result}, nil
}

// failure builds the error a --fail-* or --prompt-error flag asks for, with
// the message a real runtime would give for that code.
func failure(code int) *Error {
	switch {
	case code == -32000:
		return errorf(code, "authentication required")
	case code >= 400 && code <= 599:
		return errorf(code, "model backend unavailable (status %d)", code)
	default:
		return errorf(code, "refagent: failing on request")
	}
}

type sessionParams struct {
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

func (a *Agent) newSession(params json.RawMessage) (reply, error) {
	var p sessionParams
	if err := decodeParams(params, &p); err != nil {
		return reply{}, err
	}
	if p.Cwd == "" || p.MCPServers == nil {
		return reply{}, errorf(-32602, "invalid params: cwd and mcpServers are required")
	}
	if a.opts.FailNewSession != 0 {
		return reply{}, failure(a.opts.FailNewSession)
	}
	if a.opts.Chatty {
		// A vendor notification without a session id before the session
		// exists, as some runtimes send.
		_ = a.c.Notify("_refagent/status", map[string]any{"state": "creating session"})
	}
	s, err := a.store.create(p.Cwd)
	if err != nil {
		return reply{}, errorf(-32603, "creating session: %v", err)
	}
	a.record("session/new", s.ID, p)
	a.log.Info("session created", "session_id", s.ID)
	rep := reply{result: map[string]any{"sessionId": s.ID}}
	if a.opts.Chatty {
		rep.after = append(rep.after, notification("session/update", map[string]any{
			"sessionId": s.ID,
			"update": map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{
				map[string]any{"name": "refagent-help", "description": "List the reference agent's prompt words"},
			}},
		}))
	}
	return rep, nil
}

// continueSession serves session/load and session/resume: replayBefore
// replays the conversation before the response, replayAfter after it.
func (a *Agent) continueSession(method string, params json.RawMessage, replayBefore, replayAfter bool) (reply, error) {
	var p sessionParams
	if err := decodeParams(params, &p); err != nil {
		return reply{}, err
	}
	if p.SessionID == "" || p.Cwd == "" {
		return reply{}, errorf(-32602, "invalid params: sessionId and cwd are required")
	}
	s, ok := a.store.get(p.SessionID)
	if !ok {
		return reply{}, errorf(-32002, "session not found: %s", p.SessionID)
	}
	a.record(method, s.ID, p)
	history := a.store.history(s)
	replay := replayOf(s.ID, history)
	var rep reply
	rep.result = map[string]any{}
	if replayBefore {
		for _, m := range replay {
			if err := a.c.writeLines(m); err != nil {
				return reply{}, err
			}
		}
	}
	if replayAfter {
		rep.after = replay
	}
	a.log.Info("session continued", "method", method, "session_id", s.ID, "exchanges", len(history))
	return rep, nil
}

func replayOf(sid string, history []Exchange) []any {
	var out []any
	for i, x := range history {
		out = append(out,
			update(sid, chunk("user_message_chunk", fmt.Sprintf("%s-u%d", sid, i+1), x.User)),
			update(sid, chunk("agent_message_chunk", fmt.Sprintf("%s-a%d", sid, i+1), x.Agent)))
	}
	return out
}

func (a *Agent) closeSession(params json.RawMessage, fail, deleting bool) (reply, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(params, &p); err != nil {
		return reply{}, err
	}
	if fail {
		return reply{}, errorf(-32603, "refagent: failing on request")
	}
	a.mu.Lock()
	if t := a.turns[p.SessionID]; t != nil {
		t.cancel() // closing a session cancels its turn
	}
	a.mu.Unlock()
	if deleting {
		// Deleting an unknown id succeeds silently.
		if err := a.store.remove(p.SessionID); err != nil {
			return reply{}, errorf(-32603, "deleting session: %v", err)
		}
		return reply{result: map[string]any{}}, nil
	}
	if !a.store.forget(p.SessionID) {
		return reply{}, errorf(-32002, "session not found: %s", p.SessionID)
	}
	return reply{result: map[string]any{}}, nil
}

// record appends the MCP servers a session request carried to the
// --record-mcp file, so tests can read back exactly what they were given.
func (a *Agent) record(method, sessionID string, p sessionParams) {
	if a.opts.RecordMCP == "" {
		return
	}
	servers := p.MCPServers
	if servers == nil {
		servers = json.RawMessage("null")
	}
	if err := appendJSONLine(a.opts.RecordMCP, Record{Method: method, SessionID: sessionID, Cwd: p.Cwd, MCPServers: servers}); err != nil {
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
	return notification("session/update", map[string]any{"sessionId": sessionID, "update": u})
}

func chunk(kind, messageID, text string) map[string]any {
	return map[string]any{
		"sessionUpdate": kind,
		"messageId":     messageID,
		"content":       map[string]any{"type": "text", "text": text},
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
