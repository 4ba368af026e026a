package acpsdk

import (
	"maps"

	"github.com/segmentio/encoding/json"
)

// The strict-mode tables, one per generated surface, keyed by the schema
// file the surface was generated from (its Surface's Schema). A row names
// what the peer must have advertised before the method may be called on
// it; a method without a row is baseline. Each table says where its rules
// come from: the schemas state them in prose ("Only available if the Agent
// supports …"), not in a form a generator could read, and the TypeScript
// SDK (2.4.0) gates nothing.
var strictTables = map[string]*strictRules{
	"schema/v1/schema.json":          v1Rules,
	"schema/v1/schema.unstable.json": v1UnstableRules,
	"schema/v2/schema.json":          v2Rules,
	"schema/v2/schema.unstable.json": v2UnstableRules,
}

// strictRules is one surface's table.
type strictRules struct {
	// agent gates the calls a client makes to an agent, client the calls
	// an agent makes to a client.
	agent, client map[string]gate
	// setup are the methods whose result says what a session supports
	// (modes, configOptions); the session is the result's sessionId, or
	// the params' when the result has none.
	setup map[string]bool
}

// gate is one row.
type gate struct {
	// requires is the wire path, from the root of the peer's initialize
	// message (the agent's response, the client's request params), of the
	// member that must be advertised: true, a non-null object, or a list
	// (non-empty when nonEmpty).
	requires string
	nonEmpty bool
	// session: requires is instead a member of the setup response of the
	// session the params name.
	session bool
	// byParams, when set, decides from the encoded params instead; has
	// looks a path up in the initialize message. paths lists every path it
	// may look up (TestStrictTablesNameRealMembers checks them).
	byParams func(params []byte, has func(path string) bool) (ok bool, requires string)
	paths    []string
}

func (g gate) needsParams() bool { return g.session || g.byParams != nil }

// allows applies the row; s.mu is held.
func (g gate) allows(s *peerState, params []byte) (bool, string) {
	switch {
	case g.byParams != nil:
		return g.byParams(params, func(path string) bool { return advertised(s.init, path, false) })
	case g.session:
		return advertised(s.sessions[sessionIDOf(params)], g.requires, g.nonEmpty), g.requires + " in the session's setup response"
	}
	return advertised(s.init, g.requires, g.nonEmpty), g.requires
}

// needs is a row requiring path to be advertised.
func needs(path string) gate { return gate{requires: path} }

// listed is a row requiring the list at path to be non-empty.
func listed(path string) gate { return gate{requires: path, nonEmpty: true} }

// inSession is a row requiring the session's setup response to carry
// member (a non-empty list when nonEmpty).
func inSession(member string, nonEmpty bool) gate {
	return gate{requires: member, session: true, nonEmpty: nonEmpty}
}

// promptContent gates session/prompt by its content blocks: a block whose
// type is in byType needs that path; other types (text, resource_link)
// are baseline. base, when set, must be advertised for any prompt.
func promptContent(base string, byType map[string]string) gate {
	paths := mapValues(byType)
	if base != "" {
		paths = append(paths, base)
	}
	return gate{paths: paths, byParams: func(params []byte, has func(string) bool) (bool, string) {
		if base != "" && !has(base) {
			return false, base
		}
		var p struct {
			Prompt []struct {
				Type string `json:"type"`
			} `json:"prompt"`
		}
		if json.Unmarshal(params, &p) != nil {
			return true, "" // malformed params are the peer's to reject
		}
		for _, b := range p.Prompt {
			if path, ok := byType[b.Type]; ok && !has(path) {
				return false, path
			}
		}
		return true, ""
	}}
}

// updateKinds gates session/update by its update's kind: a kind in byKind
// needs that path; others are baseline.
func updateKinds(byKind map[string]string) gate {
	return gate{paths: mapValues(byKind), byParams: func(params []byte, has func(string) bool) (bool, string) {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(params, &p)
		if path, ok := byKind[p.Update.SessionUpdate]; ok && !has(path) {
			return false, path
		}
		return true, ""
	}}
}

// elicitationMode gates elicitation/create by its mode: "form" needs
// elicitation.form, "url" elicitation.url, any other mode either.
func elicitationMode(elicitation string) gate {
	form, url := elicitation+".form", elicitation+".url"
	return gate{paths: []string{form, url}, byParams: func(params []byte, has func(string) bool) (bool, string) {
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		switch p.Mode {
		case "url":
			return has(url), url
		case "form":
			return has(form), form
		}
		return has(form) || has(url), elicitation
	}}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// with returns base plus extra (extra wins).
func with[V any](base, extra map[string]V) map[string]V {
	out := maps.Clone(base)
	maps.Copy(out, extra)
	return out
}

func set(methods ...string) map[string]bool {
	m := make(map[string]bool, len(methods))
	for _, x := range methods {
		m[x] = true
	}
	return m
}

// v1Rules: stable v1, from protocol.md §4. initialize, session/new,
// session/cancel and session/request_permission are baseline;
// session/prompt is baseline but its content is limited by
// promptCapabilities, and session/update is baseline except the kinds a
// client must opt into.
var v1Rules = &strictRules{
	agent: map[string]gate{
		"authenticate":              listed("authMethods"),
		"logout":                    needs("agentCapabilities.auth.logout"),
		"session/load":              needs("agentCapabilities.loadSession"),
		"session/resume":            needs("agentCapabilities.sessionCapabilities.resume"),
		"session/list":              needs("agentCapabilities.sessionCapabilities.list"),
		"session/close":             needs("agentCapabilities.sessionCapabilities.close"),
		"session/delete":            needs("agentCapabilities.sessionCapabilities.delete"),
		"session/set_mode":          inSession("modes", false),
		"session/set_config_option": inSession("configOptions", false),
		"session/prompt":            promptContent("", v1PromptContent),
	},
	client: map[string]gate{
		"fs/read_text_file":      needs("clientCapabilities.fs.readTextFile"),
		"fs/write_text_file":     needs("clientCapabilities.fs.writeTextFile"),
		"terminal/create":        needs("clientCapabilities.terminal"),
		"terminal/output":        needs("clientCapabilities.terminal"),
		"terminal/wait_for_exit": needs("clientCapabilities.terminal"),
		"terminal/kill":          needs("clientCapabilities.terminal"),
		"terminal/release":       needs("clientCapabilities.terminal"),
		"elicitation/create":     elicitationMode("clientCapabilities.elicitation"),
		"elicitation/complete":   needs("clientCapabilities.elicitation.url"),
		"session/update":         updateKinds(v1UpdateKinds),
	},
	setup: set("session/new", "session/load", "session/resume"),
}

var v1PromptContent = map[string]string{
	"image":    "agentCapabilities.promptCapabilities.image",
	"audio":    "agentCapabilities.promptCapabilities.audio",
	"resource": "agentCapabilities.promptCapabilities.embeddedContext",
}

var v1UpdateKinds = map[string]string{
	"notice":                   "clientCapabilities.session.notices",
	"compaction_update":        "clientCapabilities.session.compaction",
	"compaction_summary_chunk": "clientCapabilities.session.compaction",
}

// v1UnstableRules: v1 plus the unstable features, each row from the
// description in schema/v1/schema.unstable.json named beside it.
// session/fork's request says "the `session.fork` capability", which names
// no member of the schema; SessionCapabilities.fork ("Whether the agent
// supports `session/fork`") is the one it means. Not gated, for want of a
// rule in the schema: mcp/message (either way), auth/status_update (gated
// by the agent's own auth.status, which the agent side does not track),
// proxy/* (not on the client–agent connection), and the systemPrompt and
// additionalDirectories members of session setup params.
var v1UnstableRules = &strictRules{
	agent: with(v1Rules.agent, map[string]gate{
		"session/fork":      needs("agentCapabilities.sessionCapabilities.fork"),   // SessionCapabilities.fork
		"session/set_title": needs("agentCapabilities.sessionCapabilities.title"),  // SetSessionTitleRequest
		"session/status":    needs("agentCapabilities.sessionCapabilities.status"), // SessionStatusRequest
		"session/archive":   needs("agentCapabilities.sessionCapabilities.archive"),
		"session/unarchive": needs("agentCapabilities.sessionCapabilities.archive"), // (Un)ArchiveSessionRequest
		"auth/status":       needs("agentCapabilities.auth.status"),                 // AgentAuthCapabilities.status
		"providers/list":    needs("agentCapabilities.providers"),                   // AgentCapabilities.providers
		"providers/set":     needs("agentCapabilities.providers"),
		"providers/disable": needs("agentCapabilities.providers"),
	}),
	client: with(v1Rules.client, map[string]gate{
		// SessionUpdate's variants; ClientCapabilities.plan and SubagentCapabilities.
		"session/update": updateKinds(with(v1UpdateKinds, map[string]string{
			"plan_update":           "clientCapabilities.plan",
			"plan_removed":          "clientCapabilities.plan",
			"subagent_update":       "clientCapabilities.subagents",
			"session_message":       "clientCapabilities.subagents",
			"session_message_chunk": "clientCapabilities.subagents",
		})),
	}),
	// ForkSessionResponse carries modes and configOptions for the new session.
	setup: set("session/new", "session/load", "session/resume", "session/fork"),
}

// v2Rules: the v2 draft, from schema/v2/schema.json. The agent's session
// capabilities are optional there, and without them it supports no
// session/* method (AgentCapabilities.session); auth/login and auth/logout
// need a non-empty authMethods (LoginAuthRequest, LogoutAuthRequest);
// session/set_config_option needs config options on the session
// (SetSessionConfigOptionRequest; "Omitted or empty means no config options
// are advertised"). tool_call/cancel and terminal/cancel are gated by the
// tool call's or terminal's own capabilities, which strict mode does not
// track, so they pass.
var v2Rules = &strictRules{
	agent: map[string]gate{
		"auth/login":                listed("authMethods"),
		"auth/logout":               listed("authMethods"),
		"session/new":               needs("capabilities.session"),
		"session/list":              needs("capabilities.session"),
		"session/resume":            needs("capabilities.session"),
		"session/close":             needs("capabilities.session"),
		"session/cancel":            needs("capabilities.session"),
		"session/delete":            needs("capabilities.session.delete"),
		"session/set_config_option": inSession("configOptions", true),
		"session/prompt": promptContent("capabilities.session", map[string]string{
			"image":    "capabilities.session.prompt.image",
			"audio":    "capabilities.session.prompt.audio",
			"resource": "capabilities.session.prompt.embeddedContext",
		}),
	},
	client: map[string]gate{
		"elicitation/create":   elicitationMode("capabilities.elicitation"),
		"elicitation/complete": needs("capabilities.elicitation.url"),
	},
	setup: set("session/new", "session/resume"),
}

// v2UnstableRules: the v2 draft plus its unstable features, each row from
// schema/v2/schema.unstable.json ("Only available if the Agent supports
// the `session.…` capability", AgentCapabilities.providers,
// AgentAuthCapabilities.status). Not gated, as on v1 unstable: mcp/message,
// auth/status_update, proxy/*, and the systemPrompt member of session setup
// params.
var v2UnstableRules = &strictRules{
	agent: with(v2Rules.agent, map[string]gate{
		"session/fork":      needs("capabilities.session.fork"),
		"session/set_title": needs("capabilities.session.title"),
		"session/status":    needs("capabilities.session.status"),
		"session/archive":   needs("capabilities.session.archive"),
		"session/unarchive": needs("capabilities.session.archive"),
		"auth/status":       needs("capabilities.auth.status"),
		"providers/list":    needs("capabilities.providers"),
		"providers/set":     needs("capabilities.providers"),
		"providers/disable": needs("capabilities.providers"),
	}),
	client: v2Rules.client,
	// ForkSessionResponse carries configOptions for the new session.
	setup: set("session/new", "session/resume", "session/fork"),
}
