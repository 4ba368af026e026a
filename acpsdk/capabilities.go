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
// they are a small hand table here. What the peer advertised is read with
// the generated decoders, the very decode the typed API gives the user
// (lenient where the schema says x-deserialize-*, exact about member
// names), so strict mode and the user never disagree about a capability.

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

// agentView is what an agent advertised in its initialize response.
type agentView struct {
	caps        gen.AgentCapabilities
	authMethods int
}

// clientView is what a client advertised in its initialize request.
type clientView struct {
	caps gen.ClientCapabilities
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

// learnAgent records what an initialize response advertised and returns it
// decoded, for the caller's typed result. A response that does not decode
// advertises nothing.
func (s *peerState) learnAgent(initResult []byte) (*gen.InitializeResponse, error) {
	var r gen.InitializeResponse
	err := r.UnmarshalJSON(initResult)
	s.mu.Lock()
	if err != nil {
		s.agent = agentView{}
	} else {
		s.agent = agentView{caps: r.AgentCapabilities, authMethods: len(r.AuthMethods)}
	}
	s.mu.Unlock()
	return &r, err
}

// learnClient records what an initialize request advertised; params that
// do not decode advertise nothing.
func (s *peerState) learnClient(initParams []byte) {
	var r gen.InitializeRequest
	err := r.UnmarshalJSON(initParams)
	s.mu.Lock()
	if err != nil {
		s.client = clientView{}
	} else {
		s.client = clientView{caps: r.ClientCapabilities}
	}
	s.mu.Unlock()
}

// learnSession records a setup response's modes and configOptions.
func (s *peerState) learnSession(method string, params, result []byte) {
	var (
		id  string
		f   sessionFeatures
		err error
	)
	switch method {
	case gen.MethodSessionNew:
		var r gen.NewSessionResponse
		err = r.UnmarshalJSON(result)
		id, f = string(r.SessionID), sessionFeatures{modes: r.Modes != nil, configOptions: r.ConfigOptions != nil}
	case gen.MethodSessionLoad:
		var r gen.LoadSessionResponse
		err = r.UnmarshalJSON(result)
		id, f = sessionIDOf(params), sessionFeatures{modes: r.Modes != nil, configOptions: r.ConfigOptions != nil}
	case gen.MethodSessionResume:
		var r gen.ResumeSessionResponse
		err = r.UnmarshalJSON(result)
		id, f = sessionIDOf(params), sessionFeatures{modes: r.Modes != nil, configOptions: r.ConfigOptions != nil}
	}
	if err != nil || id == "" {
		return
	}
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[string]sessionFeatures)
	}
	s.sessions[id] = f
	s.mu.Unlock()
}

// sessionIDOf reads the session id of params this side encoded.
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
		return v.authMethods > 0, ""
	}},
	gen.MethodLogout: {requires: "agentCapabilities.auth.logout", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.Auth.Logout != nil, ""
	}},
	gen.MethodSessionLoad: {requires: "agentCapabilities.loadSession", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.LoadSession, ""
	}},
	gen.MethodSessionResume: {requires: "agentCapabilities.sessionCapabilities.resume", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.SessionCapabilities.Resume != nil, ""
	}},
	gen.MethodSessionList: {requires: "agentCapabilities.sessionCapabilities.list", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.SessionCapabilities.List != nil, ""
	}},
	gen.MethodSessionClose: {requires: "agentCapabilities.sessionCapabilities.close", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.SessionCapabilities.Close != nil, ""
	}},
	gen.MethodSessionDelete: {requires: "agentCapabilities.sessionCapabilities.delete", allowed: func(v *agentView, _ map[string]sessionFeatures, _ []byte) (bool, string) {
		return v.caps.SessionCapabilities.Delete != nil, ""
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
	pc := v.caps.PromptCapabilities
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
		return v.caps.Terminal, ""
	}}
}

// clientGates: session/request_permission is baseline; session/update is
// baseline except the variants a client must opt into.
var clientGates = map[string]clientGate{
	gen.MethodFsReadTextFile: {requires: "clientCapabilities.fs.readTextFile", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.caps.Fs.ReadTextFile, ""
	}},
	gen.MethodFsWriteTextFile: {requires: "clientCapabilities.fs.writeTextFile", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.caps.Fs.WriteTextFile, ""
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
		form, url := false, false
		if e := v.caps.Elicitation; e != nil {
			form, url = e.Form != nil, e.URL != nil
		}
		switch p.Mode {
		case "url":
			return url, "clientCapabilities.elicitation.url"
		case "form":
			return form, "clientCapabilities.elicitation.form"
		}
		return form || url, "clientCapabilities.elicitation"
	}},
	gen.MethodElicitationComplete: {requires: "clientCapabilities.elicitation.url", allowed: func(v *clientView, _ []byte) (bool, string) {
		return v.caps.Elicitation != nil && v.caps.Elicitation.URL != nil, ""
	}},
	gen.MethodSessionUpdate: {needsParams: true, allowed: func(v *clientView, params []byte) (bool, string) {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(params, &p)
		s := v.caps.Session
		switch p.Update.SessionUpdate {
		case "notice":
			return s != nil && s.Notices != nil, "clientCapabilities.session.notices"
		case "compaction_update", "compaction_summary_chunk":
			return s != nil && s.Compaction != nil, "clientCapabilities.session.compaction"
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
	if g.needsParams && params != nil {
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
	if g.needsParams && params != nil {
		return raw, nil
	}
	return params, nil
}

func encodeIfNeeded(needed bool, method string, params any) (json.RawMessage, error) {
	if !needed {
		return nil, nil
	}
	return encodeParams(method, params)
}

// encodeParams encodes params exactly as the connection would on sending
// them (no HTML escaping, raw members kept byte for byte), so params strict
// mode had to look at go out unchanged.
func encodeParams(method string, params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	raw, err := json.Append(nil, params, 0)
	if err != nil {
		return nil, fmt.Errorf("acpsdk: encoding %s params: %w", method, err)
	}
	return raw, nil
}
