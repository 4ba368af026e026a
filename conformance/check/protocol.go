package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// RequestedVersion is the protocol version acpcheck asks for.
const RequestedVersion = 1

// Handshake is what acpcheck learned from initialize.
type Handshake struct {
	// Result is the raw initialize result.
	Result json.RawMessage
	// ProtocolVersion is the version the agent answered.
	ProtocolVersion json.Number
	// Caps are the raw agentCapabilities (nil when absent).
	Caps json.RawMessage
	// AgentInfo is the raw agentInfo (nil when absent).
	AgentInfo json.RawMessage
	// AuthMethods are the ids of the advertised auth methods the client
	// may pass to authenticate (type "agent", the default; "terminal"
	// methods are run by the client instead).
	AuthMethods []string
	// AllAuthMethods names every advertised auth method: its id, and
	// for a type other than "agent" the type in parentheses
	// ("login (terminal)").
	AllAuthMethods []string

	gates map[string]bool
}

// The capability gates Handshake.Advertises knows, as check Gates name
// them.
const (
	GateLoadSession     = "loadSession"
	GateResume          = "sessionCapabilities.resume"
	GateClose           = "sessionCapabilities.close"
	GateDelete          = "sessionCapabilities.delete"
	GateList            = "sessionCapabilities.list"
	GateImage           = "promptCapabilities.image"
	GateAudio           = "promptCapabilities.audio"
	GateEmbeddedContext = "promptCapabilities.embeddedContext"
	GateMCPHTTP         = "mcpCapabilities.http"
	GateMCPSSE          = "mcpCapabilities.sse"
	// GateAuthMethods: at least one auth method the client may pass to
	// authenticate.
	GateAuthMethods = "authMethods"
	// GateAnyContent: at least one of image, audio and embedded context.
	GateAnyContent = "promptCapabilities (image, audio or embeddedContext)"
	// GateModes and GateConfigOptions are advertised by session/new's
	// answer (modes, configOptions), not by initialize.
	GateModes         = "modes"
	GateConfigOptions = "configOptions"
)

// knownGates are the gates the handshake and session/new set, so a check
// cannot name one that is never learned.
var knownGates = []string{
	GateLoadSession, GateResume, GateClose, GateDelete, GateList,
	GateImage, GateAudio, GateEmbeddedContext, GateMCPHTTP, GateMCPSSE,
	GateAuthMethods, GateAnyContent, GateModes, GateConfigOptions,
}

// Advertises reports whether the agent advertised the capability gate
// names. Capabilities are read the way an SDK client reads them: through
// the generated decoder, where a malformed capability means "not
// advertised".
func (h *Handshake) Advertises(gate string) bool { return h.gates[gate] }

// initializeParams is the client's side of the handshake: no client
// capability is offered, so the agent must not call fs or terminal methods.
func initializeParams(version int) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"clientCapabilities": map[string]any{
			"fs":       map[string]any{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]any{"name": "acpcheck", "version": "1"},
	}
}

// Initialize performs the handshake. Any failure is returned as a check
// failure; a -32000 answer as "needs a credential".
// On a shared process another check initialized, it returns that
// check's answer without initializing again, and says so in the
// transcript.
func (s *Session) Initialize(ctx context.Context) (*Handshake, error) {
	if s.share != nil && s.share.handshake != nil {
		s.tr.notef("initialize not sent again: the shared process's answer to %s's initialize stands", s.share.first)
		return s.share.handshake, nil
	}
	h, err := s.initializeWith(ctx, initializeParams(RequestedVersion))
	if err == nil && s.share != nil {
		s.share.handshake = h
	}
	return h, err
}

func (s *Session) initializeWith(ctx context.Context, params map[string]any) (*Handshake, error) {
	if s.share != nil && s.share.handshake != nil {
		// Checks that initialize their own way declare NeedsOwnHandshake
		// and never get a shared process; this failure is graded again on
		// a fresh one.
		return nil, Failf("initialize: the process is shared and %s initialized it already", s.share.first)
	}
	m, err := s.Call(ctx, gen.MethodInitialize, params)
	if err != nil {
		return nil, Failf("initialize: %v", err)
	}
	if m.Error != nil {
		if m.Error.Code == CodeAuthRequired {
			return nil, NeedsCredentialf(NeedHandshake, "initialize answered %v: the agent needs a credential (log it in first)", m.Error)
		}
		return nil, Failf("initialize answered %v", m.Error)
	}
	h := &Handshake{Result: m.Result, gates: map[string]bool{}}
	var r struct {
		ProtocolVersion json.Number     `json:"protocolVersion"`
		Caps            json.RawMessage `json:"agentCapabilities"`
		AgentInfo       json.RawMessage `json:"agentInfo"`
	}
	d := json.NewDecoder(bytes.NewReader(m.Result))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return nil, Failf("initialize result is not an object: %v", err)
	}
	h.ProtocolVersion, h.Caps, h.AgentInfo = r.ProtocolVersion, r.Caps, r.AgentInfo
	var info Peer
	if json.Unmarshal(r.AgentInfo, &info) == nil {
		s.peer = info
	}
	// The capabilities check is the one that judges shapes; here a
	// malformed capability reads as not advertised.
	var typed gen.InitializeResponse
	if err := typed.UnmarshalJSON(m.Result); err == nil {
		c := typed.AgentCapabilities
		sc, pc := c.SessionCapabilities, c.PromptCapabilities
		for _, am := range typed.AuthMethods {
			switch a := am.(type) {
			case *gen.AuthMethodAgent:
				h.AuthMethods = append(h.AuthMethods, string(a.ID))
				h.AllAuthMethods = append(h.AllAuthMethods, string(a.ID))
			case *gen.AuthMethodTerminal:
				h.AllAuthMethods = append(h.AllAuthMethods, string(a.ID)+" (terminal)")
			case *gen.AuthMethodUnknown:
				h.AllAuthMethods = append(h.AllAuthMethods, unknownAuthMethod(a.Raw))
			}
		}
		h.gates = map[string]bool{
			GateLoadSession: c.LoadSession,
			GateResume:      sc.Resume != nil, GateClose: sc.Close != nil,
			GateDelete: sc.Delete != nil, GateList: sc.List != nil,
			GateImage: pc.Image, GateAudio: pc.Audio, GateEmbeddedContext: pc.EmbeddedContext,
			GateAnyContent: pc.Image || pc.Audio || pc.EmbeddedContext,
			GateMCPHTTP:    c.McpCapabilities.HTTP, GateMCPSSE: c.McpCapabilities.SSE,
			GateAuthMethods: len(h.AuthMethods) > 0,
		}
		s.advertised.learn(h.gates)
		s.advertised.learnAuth(h.AllAuthMethods)
	}
	return h, nil
}

// unknownAuthMethod names an auth method of a type the schema does not
// know: "id (type)".
func unknownAuthMethod(raw json.RawMessage) string {
	var m struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &m)
	return fmt.Sprintf("%s (%s)", m.ID, m.Type)
}

// gated initializes, as a prerequisite, and skips the check when the
// agent does not advertise gate.
func gated(ctx context.Context, s *Session, gate string) (*Handshake, error) {
	h, err := s.Initialize(ctx)
	if err != nil {
		return nil, prereq(err)
	}
	if !h.Advertises(gate) {
		return nil, Skipf("agent does not advertise %s", gate)
	}
	return h, nil
}

// gatedSession is gated, then a new session as a prerequisite.
func gatedSession(ctx context.Context, s *Session, gate string) (*Handshake, string, error) {
	h, err := gated(ctx, s, gate)
	if err != nil {
		return nil, "", err
	}
	sid, err := s.NewSession(ctx)
	return h, sid, prereq(err)
}

// CodeAuthRequired is ACP's "authentication required" error code.
const CodeAuthRequired = -32000

// CodeResourceNotFound is ACP's "resource not found" error code.
const CodeResourceNotFound = -32002

// CodeInvalidParams is JSON-RPC's "invalid params" error code.
const CodeInvalidParams = -32602

// documentedCodes are the error codes the schema's ErrorCode names.
var documentedCodes = map[int64]bool{
	-32700: true, -32600: true, -32601: true, -32602: true, -32603: true,
	-32800: true, CodeAuthRequired: true, CodeResourceNotFound: true,
}

// Authenticate calls authenticate with methodID and returns its answer.
func (s *Session) Authenticate(ctx context.Context, methodID string) (*Message, error) {
	m, err := s.Call(ctx, gen.MethodAuthenticate, map[string]any{"methodId": methodID})
	if err != nil {
		return nil, Failf("authenticate %q: %v", methodID, err)
	}
	return m, nil
}

// SessionSetup is what session/new answered.
type SessionSetup struct {
	// ID is the session id.
	ID string
	// Modes is the mode state, when the agent offers modes.
	Modes *ModeState
	// ConfigOptions are the session's configuration options, raw.
	ConfigOptions []json.RawMessage
}

// ModeState is session/new's modes, as the wire had it.
type ModeState struct {
	CurrentModeID  string `json:"currentModeId"`
	AvailableModes []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"availableModes"`
}

// NewSession creates a session and returns its id.
func (s *Session) NewSession(ctx context.Context) (string, error) {
	setup, err := s.CreateSession(ctx)
	if err != nil {
		return "", err
	}
	return setup.ID, nil
}

// CreateSession authenticates first when the grading was asked to (once
// per agent process), then creates a session in Cwd. A -32000 answer to
// either is "needs a credential" (NeedSession).
func (s *Session) CreateSession(ctx context.Context) (*SessionSetup, error) {
	return s.createSessionWith(ctx, map[string]any{"cwd": s.Cwd, "mcpServers": []any{}})
}

func (s *Session) createSessionWith(ctx context.Context, params map[string]any) (*SessionSetup, error) {
	if s.authMethod != "" && !s.authenticated {
		m, err := s.Authenticate(ctx, s.authMethod)
		if err != nil {
			return nil, err
		}
		if m.Error != nil {
			return nil, NeedsCredentialf(NeedSession, "authenticate %q (--auth-method) answered %v", s.authMethod, m.Error)
		}
		s.authenticated = true
	}
	m, err := s.Call(ctx, gen.MethodSessionNew, params)
	if err != nil {
		return nil, Failf("session/new: %v", err)
	}
	if m.Error != nil {
		if m.Error.Code == CodeAuthRequired {
			hint := "log it in first, or name a method with --auth-method"
			if s.authMethod != "" {
				hint = fmt.Sprintf("even after authenticate %q", s.authMethod)
			}
			return nil, NeedsCredentialf(NeedSession, "session/new answered %v: the agent needs a credential (%s)", m.Error, hint)
		}
		return nil, Failf("session/new answered %v", m.Error)
	}
	var r struct {
		SessionID     string            `json:"sessionId"`
		Modes         json.RawMessage   `json:"modes"`
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.SessionID == "" {
		return nil, Failf("session/new result has no sessionId string: %s", truncate(string(m.Result), 200))
	}
	setup := &SessionSetup{ID: r.SessionID, ConfigOptions: r.ConfigOptions}
	var modes ModeState
	if kindOf(r.Modes) == "an object" && json.Unmarshal(r.Modes, &modes) == nil && len(modes.AvailableModes) > 0 {
		setup.Modes = &modes
	}
	s.advertised.learn(map[string]bool{GateModes: setup.Modes != nil, GateConfigOptions: len(selectOptions(setup.ConfigOptions)) > 0})
	return setup, nil
}

// Turn is one prompt turn as observed.
type Turn struct {
	// From is the sequence number of the first message received after the
	// prompt was sent.
	From int
	// Response is the prompt's response.
	Response *Message
	// StopReason is the result's stopReason.
	StopReason string
}

// PromptParams builds session/prompt params with one text block.
func PromptParams(sessionID, text string) map[string]any {
	return map[string]any{
		"sessionId": sessionID,
		"prompt":    []any{map[string]any{"type": gen.ContentBlockTextTag, "text": text}},
	}
}

// Prompt runs one turn to its response. An error response that means the
// model or backend is unavailable becomes NeedsModelf; any other error
// response, or a result without a stopReason, is a failure.
func (s *Session) Prompt(ctx context.Context, sessionID, text string) (*Turn, error) {
	from := s.Mark()
	id, err := s.Send(gen.MethodSessionPrompt, PromptParams(sessionID, text))
	if err != nil {
		return nil, Failf("session/prompt: %v", err)
	}
	return s.finishTurn(ctx, from, id)
}

func (s *Session) finishTurn(ctx context.Context, from int, id int64) (*Turn, error) {
	m, err := s.Await(ctx, id)
	if err != nil {
		return nil, Failf("session/prompt: %v", err)
	}
	if m.Error != nil {
		if ModelUnavailable(m.Error.Code) {
			return nil, NeedsModelf("session/prompt answered %v", m.Error)
		}
		return nil, Failf("session/prompt answered %v", m.Error)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.StopReason == "" {
		return nil, Failf("session/prompt result has no stopReason: %s", m.Result)
	}
	return &Turn{From: from, Response: m, StopReason: r.StopReason}, nil
}

// ModelUnavailable reports whether a prompt error code means the agent
// could not reach a working model (authentication required, an internal or
// backend failure, or an HTTP-like status) rather than a protocol fault.
func ModelUnavailable(code int64) bool {
	return code == -32000 || code == -32603 || (code >= 400 && code <= 599)
}

// Update is a session/update notification, decoded just enough to classify.
type Update struct {
	Msg       *Message
	SessionID string
	Kind      string
}

// Updates returns the session/update notifications among msgs.
func Updates(msgs []*Message) []Update {
	var out []Update
	for _, m := range msgs {
		if !m.IsNotification() || m.Method != gen.MethodSessionUpdate {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out = append(out, Update{Msg: m, SessionID: p.SessionID, Kind: p.Update.Kind})
	}
	return out
}

// between returns the messages with From <= Seq < to.
func between(msgs []*Message, to int) []*Message {
	var out []*Message
	for _, m := range msgs {
		if m.Seq < to {
			out = append(out, m)
		}
	}
	return out
}

// asOutcome reports whether err already says how the check ended.
func asOutcome(err error) (*outcome, bool) {
	var o *outcome
	ok := errors.As(err, &o)
	return o, ok
}

// describe renders a JSON-RPC error or result briefly for reasons.
func describe(m *Message) string {
	if m.Error != nil {
		return m.Error.Error()
	}
	return fmt.Sprintf("result %s", truncate(string(m.Result), 200))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
