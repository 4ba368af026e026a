package check

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// Gates of client checks. The first three are the client's own
// clientCapabilities; the last two are what a client does rather than
// advertises, learned from the first check that tries them.
const (
	GateClientFsRead  = "clientCapabilities.fs.readTextFile"
	GateClientFsWrite = "clientCapabilities.fs.writeTextFile"
	GateClientTerm    = "clientCapabilities.terminal"
	// GateCancels: the client cancels its turn when interrupted (SIGINT),
	// by session/cancel or $/cancel_request.
	GateCancels = "cancellation when interrupted"
	// GateContinues: the client continues a saved session (session/load
	// or session/resume) when the agent offers it.
	GateContinues = "session continuation"
)

// Scenario is how the scenario agent behaves in one check: the default
// agent, with the hooks a check sets. The default agent answers
// initialize with protocol version 1, no optional capability and its
// agentInfo; session/new with a fresh session id; session/load,
// session/resume and session/close only when its initialize answer
// advertised them; every prompt with one text chunk and end_turn; any
// other request with -32601. It ignores notifications.
type Scenario struct {
	// Initialize returns the initialize result to answer m with; nil:
	// DefaultInitializeResult.
	Initialize func(m *Message) map[string]any
	// NewSession runs before session/new (request m) is answered with sid:
	// it may write to the client first.
	NewSession func(ctx context.Context, c *AgentConn, m *Message, sid string) error
	// Continue runs before session/load or session/resume (request m) is
	// answered.
	Continue func(ctx context.Context, c *AgentConn, m *Message) error
	// Turn plays each prompt turn; nil: PlainTurn. A turn it leaves
	// unanswered is answered end_turn; an error it returns ends the
	// scenario (the check's verdict).
	Turn func(ctx context.Context, t *AgentTurn) error
}

// DefaultInitializeResult is the scenario agent's initialize answer:
// version 1, every optional capability off, no auth methods.
func DefaultInitializeResult() map[string]any {
	return map[string]any{
		"protocolVersion": 1,
		"agentCapabilities": map[string]any{
			"loadSession":        false,
			"promptCapabilities": map[string]any{"image": false, "audio": false, "embeddedContext": false},
			"mcpCapabilities":    map[string]any{"http": false, "sse": false},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]any{"name": ScenarioAgentName, "version": "1.0.0"},
	}
}

// AgentTurn is one prompt turn the scenario agent plays.
type AgentTurn struct {
	// C is the agent connection the prompt came on.
	C *AgentConn
	// N counts the connection's turns from 1.
	N int
	// Prompt is the session/prompt request.
	Prompt *Message
	// SessionID is the prompt's session.
	SessionID string

	answered bool
	// openAtAnswer says the connection was still open when the agent
	// answered the prompt.
	openAtAnswer bool
	answerMark   int
}

// PlainTurn is the default turn: one agent_message_chunk carrying the
// run's marker for the turn, then end_turn.
func PlainTurn(ctx context.Context, t *AgentTurn) error {
	if err := t.Chunk(t.C.run.Marker(fmt.Sprintf("turn%d", t.N))); err != nil {
		return err
	}
	return t.End(gen.StopReasonEndTurn)
}

// Update sends one session/update for the turn's session.
func (t *AgentTurn) Update(update any) error { return t.C.Update(t.SessionID, update) }

// Update sends one session/update naming sessionID.
func (c *AgentConn) Update(sessionID string, update any) error {
	return c.Notify(gen.MethodSessionUpdate, map[string]any{"sessionId": sessionID, "update": update})
}

// Chunk sends text as an agent_message_chunk of the turn.
func (t *AgentTurn) Chunk(text string) error { return t.Update(TextChunk(text)) }

// TextChunk is an agent_message_chunk update carrying text.
func TextChunk(text string) map[string]any {
	return map[string]any{"sessionUpdate": gen.SessionUpdateAgentMessageChunkTag, "content": map[string]any{"type": "text", "text": text}}
}

// End answers the prompt with stopReason.
func (t *AgentTurn) End(stopReason gen.StopReason) error {
	t.answered = true
	t.openAtAnswer = !t.C.Ended()
	t.answerMark = t.C.Mark()
	return t.C.Reply(t.Prompt, map[string]any{"stopReason": stopReason})
}

// Answered reports whether the turn's prompt was answered, and whether the
// connection was still open then.
func (t *AgentTurn) Answered() (answered, open bool) { return t.answered, t.openAtAnswer }

// PermissionOptions are the options the scenario agent offers: one of
// each kind, ids named after their kinds.
func PermissionOptions() []map[string]any {
	var opts []map[string]any
	for _, k := range []gen.PermissionOptionKind{gen.PermissionOptionKindAllowOnce, gen.PermissionOptionKindAllowAlways, gen.PermissionOptionKindRejectOnce, gen.PermissionOptionKindRejectAlways} {
		opts = append(opts, map[string]any{"optionId": "acpcheck-" + string(k), "name": string(k), "kind": k})
	}
	return opts
}

// SendPermission sends a session/request_permission for a tool call of
// the turn, offering PermissionOptions, and returns its id.
func (t *AgentTurn) SendPermission(toolCallID string) (int64, error) {
	return t.C.Send(gen.MethodSessionRequestPermission, map[string]any{
		"sessionId": t.SessionID,
		"toolCall":  map[string]any{"toolCallId": toolCallID, "title": "acpcheck asks before a tool call", "kind": "edit", "status": "pending"},
		"options":   PermissionOptions(),
	})
}

// Play runs sc against this run's client. It waits (bounded by the
// timeout) for the client to start its scenario agent, serves that agent
// with sc until the client ends the connection — or sends nothing for
// the timeout with the connection open — then waits up to the exit bound
// for the client to exit. It returns the first scenario agent, and the
// error a hook of sc returned. A client that starts no agent is a
// failure.
func (r *ClientRun) Play(ctx context.Context, sc Scenario) (*AgentConn, error) {
	var c *AgentConn
	r.wait(ctx, startBound(r.g.cfg), func() bool {
		if len(r.conns) > 0 {
			c = r.conns[0]
		}
		return c != nil || r.exited
	})
	if c == nil {
		if exited, code, _ := r.ClientExit(); exited {
			return nil, Failf("the client exited (status %d) without starting its agent (the %s command)", code, AgentPlaceholder)
		}
		return nil, Failf("the client did not start its agent (the %s command) within %v", AgentPlaceholder, startBound(r.g.cfg))
	}
	err := c.serve(ctx, &sc)
	if errors.Is(err, ErrAgentClosed) {
		err = Failf("the client ended the connection while the agent was still playing its part (%v)", err)
	}
	if err == nil {
		r.wait(ctx, r.g.cfg.ExitBound, func() bool { return r.exited })
	}
	return c, err
}

// startBound bounds the wait for the client to start its agent: a client
// may load a runtime first (node, npx), so it is longer than one answer's.
func startBound(cfg ClientConfig) time.Duration { return 3 * cfg.Timeout }

// serve handles the client's messages in order until the connection
// ends, the client is idle for the timeout, ctx ends or a hook fails.
func (c *AgentConn) serve(ctx context.Context, sc *Scenario) error {
	timeout := c.run.g.cfg.Timeout
	for next := 0; ; next++ {
		var m *Message
		var closed bool
		c.run.wait(ctx, timeout, func() bool {
			if next < len(c.msgs) {
				m = c.msgs[next]
				return true
			}
			closed = c.closed
			return closed
		})
		if m == nil {
			if !closed && ctx.Err() == nil {
				c.run.tr.notef("the client sent scenario agent %d nothing for %v and kept it running", c.n, timeout)
			}
			return nil
		}
		if err := c.handle(ctx, sc, m); err != nil {
			return err
		}
	}
}

// handle answers one message from the client as sc says.
func (c *AgentConn) handle(ctx context.Context, sc *Scenario, m *Message) error {
	if !m.IsRequest() {
		return nil // notifications, responses (awaited where they are wanted) and bad lines
	}
	switch m.Method {
	case gen.MethodInitialize:
		result := DefaultInitializeResult()
		if sc.Initialize != nil {
			result = sc.Initialize(m)
		}
		c.run.mu.Lock()
		c.init = result
		c.run.mu.Unlock()
		c.run.g.learned.learn(clientGates(m.Params))
		return c.Reply(m, result)
	case gen.MethodSessionNew:
		c.run.mu.Lock()
		c.sessions++
		sid := fmt.Sprintf("%s-session-%d", c.run.marker, c.sessions)
		c.run.mu.Unlock()
		if sc.NewSession != nil {
			if err := sc.NewSession(ctx, c, m, sid); err != nil {
				return err
			}
		}
		return c.Reply(m, map[string]any{"sessionId": sid})
	case gen.MethodSessionLoad, gen.MethodSessionResume, gen.MethodSessionClose:
		if !c.offers(m.Method) {
			return c.ReplyError(m, -32601, "method not found: "+m.Method+" is not advertised")
		}
		if sc.Continue != nil && m.Method != gen.MethodSessionClose {
			if err := sc.Continue(ctx, c, m); err != nil {
				return err
			}
		}
		return c.Reply(m, map[string]any{})
	case gen.MethodSessionPrompt:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.run.mu.Lock()
		c.turns++
		t := &AgentTurn{C: c, N: c.turns, Prompt: m, SessionID: p.SessionID}
		c.run.mu.Unlock()
		play := sc.Turn
		if play == nil {
			play = PlainTurn
		}
		if err := play(ctx, t); err != nil {
			return err
		}
		if !t.answered {
			return t.End(gen.StopReasonEndTurn)
		}
		return nil
	}
	return c.ReplyError(m, -32601, "method not found")
}

// offers reports whether the agent's initialize answer advertised method.
func (c *AgentConn) offers(method string) bool {
	c.run.mu.Lock()
	init := c.init
	c.run.mu.Unlock()
	caps, _ := init["agentCapabilities"].(map[string]any)
	sessionCaps, _ := caps["sessionCapabilities"].(map[string]any)
	switch method {
	case gen.MethodSessionLoad:
		v, _ := caps["loadSession"].(bool)
		return v
	case gen.MethodSessionResume:
		return sessionCaps["resume"] != nil
	case gen.MethodSessionClose:
		return sessionCaps["close"] != nil
	}
	return false
}

// clientGates reads what initialize's clientCapabilities advertise.
func clientGates(params json.RawMessage) map[string]bool {
	var p struct {
		ClientCapabilities struct {
			Fs struct {
				ReadTextFile  bool `json:"readTextFile"`
				WriteTextFile bool `json:"writeTextFile"`
			} `json:"fs"`
			Terminal bool `json:"terminal"`
		} `json:"clientCapabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	cc := p.ClientCapabilities
	return map[string]bool{GateClientFsRead: cc.Fs.ReadTextFile, GateClientFsWrite: cc.Fs.WriteTextFile, GateClientTerm: cc.Terminal}
}

// Advertises reports whether the client's initialize advertised gate (one
// of its clientCapabilities).
func (c *AgentConn) Advertises(gate string) bool {
	init, _ := c.Initialize()
	if init == nil {
		return false
	}
	return clientGates(init.Params)[gate]
}

// Learn records what a check found the client does (GateCancels,
// GateContinues), so later checks gated on it run or skip without a
// launch.
func (r *ClientRun) Learn(gate string, does bool) {
	r.g.learned.learn(map[string]bool{gate: does})
}
