package acpsdk

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// Strict mode: what a peer must have advertised before a method may be
// called on it (protocol.md §4). The schema does not carry these rules, so
// they are a small hand table here, read from the peer's raw initialize
// message (and the session setup responses) rather than from generated
// field names, so that a schema bump cannot silently change them.

// ErrNotAdvertised matches a [*CapabilityError]: strict mode refused, without
// sending it, a call the peer's capabilities do not allow.
var ErrNotAdvertised = errors.New("acpsdk: not advertised by the peer")

// CapabilityError is strict mode's refusal of one call.
type CapabilityError struct {
	// Method is the refused method.
	Method string
	// Requires names what the peer would have had to advertise, e.g.
	// "agentCapabilities.loadSession".
	Requires string
}

// Error describes the refusal.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("acpsdk: strict mode refused %s: the peer did not advertise %s", e.Method, e.Requires)
}

// Is matches ErrNotAdvertised.
func (e *CapabilityError) Is(target error) bool { return target == ErrNotAdvertised }

// present reports whether a presence-means-support capability was sent as an
// object.
func present(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// agentView is what an agent advertised in its initialize response.
type agentView struct {
	AuthMethods       []json.RawMessage `json:"authMethods"`
	AgentCapabilities struct {
		LoadSession        bool `json:"loadSession"`
		PromptCapabilities struct {
			Image           bool `json:"image"`
			Audio           bool `json:"audio"`
			EmbeddedContext bool `json:"embeddedContext"`
		} `json:"promptCapabilities"`
		SessionCapabilities struct {
			List   json.RawMessage `json:"list"`
			Delete json.RawMessage `json:"delete"`
			Resume json.RawMessage `json:"resume"`
			Close  json.RawMessage `json:"close"`
		} `json:"sessionCapabilities"`
		Auth struct {
			Logout json.RawMessage `json:"logout"`
		} `json:"auth"`
	} `json:"agentCapabilities"`
}

// clientView is what a client advertised in its initialize request.
type clientView struct {
	ClientCapabilities struct {
		FS struct {
			ReadTextFile  bool `json:"readTextFile"`
			WriteTextFile bool `json:"writeTextFile"`
		} `json:"fs"`
		Terminal bool `json:"terminal"`
		Session  struct {
			Notices    json.RawMessage `json:"notices"`
			Compaction json.RawMessage `json:"compaction"`
		} `json:"session"`
		Elicitation struct {
			Form json.RawMessage `json:"form"`
			URL  json.RawMessage `json:"url"`
		} `json:"elicitation"`
	} `json:"clientCapabilities"`
}

// sessionFeatures is what a session setup response (session/new, load,
// resume) returned for one session.
type sessionFeatures struct {
	modes, configOptions bool
}

// peerState is one side's record of what its peer advertised. Before the
// initialize exchange nothing is advertised, so only baseline methods pass.
type peerState struct {
	mu       sync.Mutex
	agent    agentView // valid when the peer is an agent
	client   clientView
	sessions map[string]sessionFeatures
}

// decodeView decodes raw into v; a capability message that does not decode
// advertises nothing.
func decodeView[T any](raw []byte, v *T) {
	var zero T
	*v = zero
	if err := json.Unmarshal(raw, v); err != nil {
		*v = zero
	}
}

func (s *peerState) learnAgent(initResult []byte) {
	s.mu.Lock()
	decodeView(initResult, &s.agent)
	s.mu.Unlock()
}

func (s *peerState) learnClient(initParams []byte) {
	s.mu.Lock()
	decodeView(initParams, &s.client)
	s.mu.Unlock()
}

// learnSession records a setup response's modes and configOptions.
func (s *peerState) learnSession(method string, params, result []byte) {
	var r struct {
		SessionID     string          `json:"sessionId"`
		Modes         json.RawMessage `json:"modes"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	id := r.SessionID
	if method != gen.MethodSessionNew {
		id = sessionIDOf(params)
	}
	if id == "" {
		return
	}
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[string]sessionFeatures)
	}
	s.sessions[id] = sessionFeatures{modes: present(r.Modes), configOptions: len(r.ConfigOptions) > 0 && r.ConfigOptions[0] == '['}
	s.mu.Unlock()
}

func sessionIDOf(params []byte) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.SessionID
}

// isSessionSetup reports the methods whose response says what a session
// supports.
func isSessionSetup(method string) bool {
	return method == gen.MethodSessionNew || method == gen.MethodSessionLoad || method == gen.MethodSessionResume
}

// agentGate is one row of the table for calls a client makes to an agent:
// what must have been advertised, and the check. needsParams rows inspect the
// encoded params.
type agentGate struct {
	requires    string
	needsParams bool
	allowed     func(v *agentView, sessions map[string]sessionFeatures, params []byte) (bool, string)
}

// agentGates: every method an agent handles that is not baseline. initialize,
// session/new and session/cancel are baseline and absent; session/prompt is
// baseline but its content is limited by promptCapabilities.
var agentGates = map[string]agentGate{
	gen.MethodAuthenticate: {requires: "authMethods", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return len(v.AuthMethods) > 0, ""
	}},
	gen.MethodLogout: {requires: "agentCapabilities.auth.logout", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return present(v.AgentCapabilities.Auth.Logout), ""
	}},
	gen.MethodSessionLoad: {requires: "agentCapabilities.loadSession", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.AgentCapabilities.LoadSession, ""
	}},
	gen.MethodSessionResume: {requires: "agentCapabilities.sessionCapabilities.resume", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return present(v.AgentCapabilities.SessionCapabilities.Resume), ""
	}},
	gen.MethodSessionList: {requires: "agentCapabilities.sessionCapabilities.list", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return present(v.AgentCapabilities.SessionCapabilities.List), ""
	}},
	gen.MethodSessionClose: {requires: "agentCapabilities.sessionCapabilities.close", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return present(v.AgentCapabilities.SessionCapabilities.Close), ""
	}},
	gen.MethodSessionDelete: {requires: "agentCapabilities.sessionCapabilities.delete", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return present(v.AgentCapabilities.SessionCapabilities.Delete), ""
	}},
	gen.MethodSessionSetMode: {requires: "modes in the session's setup response", needsParams: true, allowed: func(_ *agentView, s map[string]sessionFeatures, params []byte) (bool, string) {
		return s[sessionIDOf(params)].modes, ""
	}},
	gen.MethodSessionSetConfigOption: {requires: "configOptions in the session's setup response", needsParams: true, allowed: func(_ *agentView, s map[string]sessionFeatures, params []byte) (bool, string) {
		return s[sessionIDOf(params)].configOptions, ""
	}},
	gen.MethodSessionPrompt: {needsParams: true, allowed: promptAllowed},
}

// promptAllowed checks each content block against promptCapabilities: text
// and resource_link are baseline.
func promptAllowed(v *agentView, _ map[string]sessionFeatures, params []byte) (bool, string) {
	var p struct {
		Prompt []struct {
			Type string `json:"type"`
		} `json:"prompt"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true, "" // malformed params are the peer's to reject
	}
	pc := v.AgentCapabilities.PromptCapabilities
	for _, b := range p.Prompt {
		switch {
		case b.Type == "image" && !pc.Image:
			return false, "agentCapabilities.promptCapabilities.image"
		case b.Type == "audio" && !pc.Audio:
			return false, "agentCapabilities.promptCapabilities.audio"
		case b.Type == "resource" && !pc.EmbeddedContext:
			return false, "agentCapabilities.promptCapabilities.embeddedContext"
		}
	}
	return true, ""
}

// clientGate is one row of the table for calls an agent makes to a client.
type clientGate struct {
	requires    string
	needsParams bool
	allowed     func(v *clientView, params []byte) (bool, string)
}

func terminalGate() clientGate {
	return clientGate{requires: "clientCapabilities.terminal", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.ClientCapabilities.Terminal, ""
	}}
}

// clientGates: session/request_permission is baseline; session/update is
// baseline except the variants a client must opt into.
var clientGates = map[string]clientGate{
	gen.MethodFsReadTextFile: {requires: "clientCapabilities.fs.readTextFile", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.ClientCapabilities.FS.ReadTextFile, ""
	}},
	gen.MethodFsWriteTextFile: {requires: "clientCapabilities.fs.writeTextFile", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.ClientCapabilities.FS.WriteTextFile, ""
	}},
	gen.MethodTerminalCreate:      terminalGate(),
	gen.MethodTerminalOutput:      terminalGate(),
	gen.MethodTerminalWaitForExit: terminalGate(),
	gen.MethodTerminalKill:        terminalGate(),
	gen.MethodTerminalRelease:     terminalGate(),
	gen.MethodElicitationCreate: {needsParams: true, allowed: func(v *clientView, params []byte) (bool, string) {
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		e := v.ClientCapabilities.Elicitation
		switch p.Mode {
		case "url":
			return present(e.URL), "clientCapabilities.elicitation.url"
		case "form":
			return present(e.Form), "clientCapabilities.elicitation.form"
		}
		return present(e.Form) || present(e.URL), "clientCapabilities.elicitation"
	}},
	gen.MethodElicitationComplete: {requires: "clientCapabilities.elicitation.url", allowed: func(v *clientView, _ []byte) (bool, string) {
		return present(v.ClientCapabilities.Elicitation.URL), ""
	}},
	gen.MethodSessionUpdate: {needsParams: true, allowed: func(v *clientView, params []byte) (bool, string) {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(params, &p)
		s := v.ClientCapabilities.Session
		switch p.Update.SessionUpdate {
		case "notice":
			return present(s.Notices), "clientCapabilities.session.notices"
		case "compaction_update", "compaction_summary_chunk":
			return present(s.Compaction), "clientCapabilities.session.compaction"
		}
		return true, ""
	}},
}

// isExtension reports an extension method (leading underscore), which
// strict mode never gates.
func isExtension(method string) bool { return strings.HasPrefix(method, "_") }

// checkAgentCall applies the agent table. It returns the params to send:
// already encoded when the check had to look inside them, so they are
// encoded once.
func (s *peerState) checkAgentCall(method string, params any) (any, error) {
	g, ok := agentGates[method]
	if !ok {
		return params, nil
	}
	raw, err := encodeIfNeeded(g.needsParams, method, params)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	allowed, requires := g.allowed(&s.agent, s.sessions, raw)
	s.mu.Unlock()
	if !allowed {
		if requires == "" {
			requires = g.requires
		}
		return nil, &CapabilityError{Method: method, Requires: requires}
	}
	if g.needsParams {
		return raw, nil
	}
	return params, nil
}

// checkClientCall applies the client table.
func (s *peerState) checkClientCall(method string, params any) (any, error) {
	g, ok := clientGates[method]
	if !ok {
		return params, nil
	}
	raw, err := encodeIfNeeded(g.needsParams, method, params)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	allowed, requires := g.allowed(&s.client, raw)
	s.mu.Unlock()
	if !allowed {
		if requires == "" {
			requires = g.requires
		}
		return nil, &CapabilityError{Method: method, Requires: requires}
	}
	if g.needsParams {
		return raw, nil
	}
	return params, nil
}

func encodeIfNeeded(needed bool, method string, params any) (json.RawMessage, error) {
	if !needed {
		return nil, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("acpsdk: encoding %s params: %w", method, err)
	}
	return raw, nil
}
