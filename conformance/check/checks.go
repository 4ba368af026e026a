package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// Prompts acpcheck sends. They are ordinary requests a model can satisfy;
// the cancel prompt asks for a long answer so there is time to cancel it
// (and its word "slow" is the reference agent's cue for a slow turn).
const (
	TurnPrompt   = "Reply with one short sentence."
	CancelPrompt = "Count from 1 to 1000, slow and steady, one number per line."
)

// UnknownSessionID is a session id no agent has created.
const UnknownSessionID = "acpcheck-no-such-session"

// turnUpdates are the session/update kinds that carry a turn's own output;
// they must all arrive before the prompt response. Other kinds
// (session_info_update, available_commands_update, usage_update, …) are
// legitimately sent between turns.
var turnUpdates = map[string]bool{
	gen.SessionUpdateUserMessageChunkTag:  true,
	gen.SessionUpdateAgentMessageChunkTag: true,
	gen.SessionUpdateAgentThoughtChunkTag: true,
	gen.SessionUpdateToolCallTag:          true,
	gen.SessionUpdateToolCallUpdateTag:    true,
	gen.SessionUpdatePlanTag:              true,
}

// replayUpdates are the kinds a session/load replay consists of.
var replayUpdates = map[string]bool{
	gen.SessionUpdateUserMessageChunkTag:  true,
	gen.SessionUpdateAgentMessageChunkTag: true,
}

// Standard returns the registry of every agent check acpcheck runs, in
// the order they are reported.
func Standard() *Registry[*Session] {
	r := NewRegistry[*Session](RoleAgent)
	for _, c := range standardChecks {
		r.Register(c)
	}
	return r
}

// standardChecks are the agent checks in report order. Pins cite the
// pinned schema (schema/v1/schema.json: a definition and what its text
// says) or the protocol's documents at agentclientprotocol.com/protocol.
var standardChecks = []Check[*Session]{
	{ID: "initialize.version", Tier: TierMandatory, Needs: needsHandshake,
		Title: "initialize answers the requested protocol version (1)",
		Pins:  "schema InitializeResponse.protocolVersion: the version the client specified if supported by the agent",
		Run:   checkVersion},
	{ID: "initialize.negotiation", Tier: TierMandatory, Needs: needsHandshake, Wire: NeedsOwnHandshake,
		Title: "a request for an unsupported version is answered with the agent's own latest",
		Pins:  "schema InitializeResponse.protocolVersion: …or the latest protocol version supported by the agent",
		Run:   checkNegotiation},
	{ID: "initialize.capabilities", Tier: TierMandatory, Needs: needsHandshake,
		Title: "capability shapes match the schema and decode",
		Pins:  "schema InitializeResponse, AgentCapabilities, AuthMethod, Implementation: member types",
		Run:   checkCapabilities},
	{ID: "initialize.agent-info", Tier: TierAdvisory, Needs: needsHandshake,
		Title: "initialize names the agent (agentInfo)",
		Pins:  "schema InitializeResponse.agentInfo: optional in v1; in future versions of the protocol, required",
		Run:   checkAgentInfo},
	{ID: "auth.unknown-method", Tier: TierCapability, Gate: GateAuthMethods, Needs: needsHandshake,
		Title: "authenticate with a method id the agent did not advertise is an error",
		Pins:  "schema AuthenticateRequest.methodId: must be one of the methods advertised in the initialize response",
		Run:   checkAuthUnknownMethod},
	{ID: "auth.method", Tier: TierCapability, Gate: GateAuthMethods, Needs: needsHandshake,
		Title: "authenticate with the advertised method --auth-method names succeeds or answers a documented error",
		Pins:  "schema AuthenticateResponse; ErrorCode (the codes the schema documents) and Error.message (required)",
		Run:   checkAuthMethod},
	{ID: "rpc.unknown-method", Tier: TierMandatory, Needs: needsHandshake,
		Title: "an unknown method, plain or extension, is answered -32601",
		Pins:  "schema ErrorCode -32601 Method not found; docs extensibility: unrecognized _ methods get -32601",
		Run:   checkUnknownMethod},
	{ID: "rpc.unknown-notification", Tier: TierMandatory, Needs: needsHandshake,
		Title: "an unknown extension notification is ignored",
		Pins:  "JSON-RPC 2.0: a notification is never answered; docs extensibility: unknown _ notifications SHOULD be ignored",
		Run:   checkUnknownNotification},
	{ID: "rpc.parse-error", Tier: TierMandatory, Needs: needsHandshake, Wire: NeedsRawLines,
		Title: "a non-JSON line gets -32700 or is ignored, and the agent keeps working",
		Pins:  "schema ErrorCode -32700 Parse error; JSON-RPC 2.0: its response carries id null",
		Run:   checkParseError},
	{ID: "session.new", Tier: TierMandatory, Needs: needsSession,
		Title: "session/new returns a session id",
		Pins:  "schema NewSessionResponse.sessionId (required)",
		Run:   checkNewSession},
	{ID: "session.unknown-id", Tier: TierMandatory, Needs: needsSession,
		Title: "a prompt for an unknown session id is an error",
		Pins:  "schema ErrorCode -32002 Resource not found: a given resource, such as a session, was not found",
		Run:   checkUnknownSession},
	{ID: "rpc.meta", Tier: TierMandatory, Needs: needsTurn, Wire: NeedsOwnHandshake,
		Title: "_meta on requests and content blocks is accepted and changes nothing",
		Pins:  "schema _meta (every request type, ContentBlock): reserved for metadata; implementations MUST NOT make assumptions about values at these keys",
		Run:   checkMeta},
	{ID: "rpc.unknown-members", Tier: TierMandatory, Needs: needsTurn, Wire: NeedsOwnHandshake,
		Title: "members a request type does not define are ignored",
		Pins:  "schema: request types do not forbid additional properties (no additionalProperties: false); docs extensibility",
		Run:   checkUnknownMembers},
	{ID: "prompt.updates-before-response", Tier: TierMandatory, Needs: needsTurn,
		Title: "every update of a turn arrives before the prompt response",
		Pins:  "docs prompt-turn: the agent reports output with session/update, then responds with the stop reason",
		Run:   checkUpdatesBeforeResponse},
	{ID: "prompt.session-ids", Tier: TierAdvisory, Needs: needsTurn,
		Title: "the updates of a turn name the prompted session",
		Pins:  "schema SessionNotification.sessionId: the session the update belongs to",
		Run:   checkSessionIDs},
	{ID: "prompt.resource-link", Tier: TierMandatory, Needs: needsTurn,
		Title: "a prompt with a resource_link block is accepted",
		Pins:  "schema PromptRequest.prompt: as a baseline, the Agent MUST support text and resource_link content blocks",
		Run:   checkResourceLink},
	{ID: "prompt.advertised-content", Tier: TierCapability, Gate: GateAnyContent, Needs: needsTurn,
		Title: "image, audio and embedded-context blocks are accepted when advertised",
		Pins:  "schema PromptCapabilities.image/audio/embeddedContext: agent supports these content blocks",
		Run:   checkAdvertisedContent},
	{ID: "prompt.unadvertised-content", Tier: TierAdvisory, Needs: needsSession,
		Title: "image, audio and embedded-context blocks are refused with -32602 when not advertised",
		Pins:  "schema PromptRequest.prompt: other variants are optionally enabled via PromptCapabilities; ErrorCode -32602 Invalid params",
		Run:   checkUnadvertisedContent},
	{ID: "prompt.client-capabilities", Tier: TierMandatory, Needs: needsTurn,
		Title: "with fs and terminal not offered, a tool-using turn calls no fs/* or terminal/* method",
		Pins:  "schema ClientCapabilities.fs (FileSystemCapabilities) and .terminal: determine which methods the agent can request",
		Run:   checkClientCapabilities},
	{ID: "rpc.cancel-request", Tier: TierAdvisory, Needs: needsTurn,
		Title: "a prompt cancelled with $/cancel_request is still answered (a result or -32800)",
		Pins:  "schema CancelRequestNotification; ErrorCode -32800 Request cancelled",
		Run:   checkCancelRequest},
	{ID: "prompt.cancel", Tier: TierMandatory, Needs: needsTurn,
		Title: "session/cancel ends the turn with stopReason cancelled",
		Pins:  "schema StopReason cancelled: MUST be returned when the client sends a session/cancel notification",
		Run:   checkCancel},
	{ID: "prompt.cancel-permission", Tier: TierMandatory, Needs: needsTurn,
		Title: "a permission request pending at session/cancel does not keep the turn from ending cancelled",
		Pins:  "docs prompt-turn cancellation: the client answers pending permission requests cancelled; the agent MUST respond to session/prompt with cancelled",
		Run:   checkCancelPermission},
	{ID: "prompt.cancel-after-turn", Tier: TierMandatory, Needs: needsTurn,
		Title: "session/cancel after the turn ended harms nothing: the next turn ends normally",
		Pins:  "schema StopReason cancelled: the turn was cancelled by the client via session/cancel (not an earlier one)",
		Run:   checkCancelAfterTurn},
	{ID: "prompt.after-cancel", Tier: TierMandatory, Needs: needsTurn,
		Title: "a prompt after a cancelled turn is served",
		Pins:  "schema SessionCapabilities: all agents MUST support session/prompt and session/cancel (the session outlives a cancel)",
		Run:   checkAfterCancel},
	{ID: "session.load", Tier: TierCapability, Gate: GateLoadSession, Needs: needsTurn,
		Title: "session/load replays the conversation before responding",
		Pins:  "docs session-setup loading: the agent MUST replay the entire conversation via session/update, then respond",
		Run:   checkLoad},
	{ID: "session.resume", Tier: TierCapability, Gate: GateResume, Needs: needsTurn,
		Title: "session/resume responds without replaying",
		Pins:  "schema ResumeSessionRequest: resumes without returning previous messages",
		Run:   checkResume},
	{ID: "session.list", Tier: TierCapability, Gate: GateList, Needs: needsSession,
		Title: "session/list lists the session created, and its cursor paging ends",
		Pins:  "schema ListSessionsResponse.sessions, SessionInfo.cwd (absolute), nextCursor: if absent, there are no more results",
		Run:   checkList},
	{ID: "session.list-cwd", Tier: TierCapability, Gate: GateList, Needs: needsSession,
		Title: "session/list's cwd filter lists the sessions of that directory only",
		Pins:  "schema ListSessionsRequest.cwd: filter sessions by working directory",
		Run:   checkListCwd},
	{ID: "session.set-mode", Tier: TierCapability, Gate: GateModes, Needs: needsSession,
		Title: "session/set_mode takes an advertised mode id as given (and any mode the agent then names current is it) and refuses an unknown one",
		Pins:  "schema SetSessionModeRequest.modeId (SessionModeId: a string); docs session-modes: must be one of availableModes",
		Run:   checkSetMode},
	{ID: "session.mode-update", Tier: TierAdvisory, Gate: GateModes, Needs: needsSession,
		Title: "session/set_mode is confirmed by a current_mode_update, or a config_option_update of the mode option, naming the mode",
		Pins:  "schema CurrentModeUpdate: the current mode of the session has changed; ConfigOptionUpdate (category mode)",
		Run:   checkModeUpdate},
	{ID: "session.set-config-option", Tier: TierCapability, Gate: GateConfigOptions, Needs: needsSession,
		Title: "session/set_config_option sets an advertised value and refuses unknown options and values",
		Pins:  "schema SetSessionConfigOptionResponse.configOptions (required): the full set of options and their current values",
		Run:   checkSetConfigOption},
	{ID: "session.close", Tier: TierCapability, Gate: GateClose, Needs: needsSession,
		Title: "session/close succeeds when advertised, and a prompt for the closed session is an error",
		Pins:  "schema CloseSessionRequest: the agent frees the resources associated with the session",
		Run:   checkClose},
	{ID: "session.delete", Tier: TierCapability, Gate: GateDelete, Needs: needsSession,
		Title: "session/delete succeeds when advertised and again for the same id; an unknown id succeeds or is -32002",
		Pins:  "schema DeleteSessionRequest; ErrorCode -32002 Resource not found",
		Run:   checkDelete},
	// The process checks come last: the first of them to run may end the
	// process the others shared (EndsProcess). SIGTERM comes first, as
	// most agents end on it, so one launch is saved for most.
	{ID: "process.sigterm", Tier: TierAdvisory, Needs: needsHandshake, Wire: NeedsProcess | EndsProcess,
		Title: "the process exits within the bound after " + signalName,
		Pins:  "good practice for a subprocess (no protocol text)",
		Run:   checkTerminate},
	{ID: "process.stdin-close", Tier: TierMandatory, Needs: needsHandshake, Wire: NeedsProcess | EndsProcess,
		Title: "the process exits within the bound after stdin closes",
		Pins:  "no explicit text: stdio has no shutdown message (docs transports), so the end of stdin is how a client ends an agent",
		Run:   checkStdinClose},
}

func checkVersion(ctx context.Context, s *Session) error {
	h, err := s.Initialize(ctx)
	if err != nil {
		return err
	}
	if h.ProtocolVersion == "" {
		return Failf("initialize result has no protocolVersion")
	}
	if h.ProtocolVersion.String() != fmt.Sprint(RequestedVersion) {
		return Failf("agent answered protocolVersion %s to a request for %d, which it must support", h.ProtocolVersion, RequestedVersion)
	}
	return nil
}

// FutureVersion is a protocol version no agent supports.
const FutureVersion = 65535

func checkNegotiation(ctx context.Context, s *Session) error {
	m, err := s.Call(ctx, gen.MethodInitialize, initializeParams(FutureVersion))
	if err != nil {
		return Failf("initialize: %v", err)
	}
	if m.Error != nil {
		if m.Error.Code == CodeAuthRequired {
			return NeedsCredentialf(NeedHandshake, "initialize answered %v: the agent needs a credential (log it in first)", m.Error)
		}
		return Failf("initialize for version %d answered %v, want the agent's own latest version", FutureVersion, m.Error)
	}
	var r struct {
		ProtocolVersion *uint16 `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.ProtocolVersion == nil {
		return Failf("initialize result has no protocolVersion integer: %s", truncate(string(m.Result), 200))
	}
	if v := *r.ProtocolVersion; v == FutureVersion || v == 0 {
		return Failf("agent answered protocolVersion %d to a request for %d, which no agent supports; want its own latest", v, FutureVersion)
	}
	return nil
}

func checkCapabilities(ctx context.Context, s *Session) error {
	h, err := s.Initialize(ctx)
	if err != nil {
		return err
	}
	errs, err := capabilityShapeErrors(h.Result)
	if err != nil {
		return Failf("%v", err)
	}
	if len(errs) > 0 {
		return Failf("%s", strings.Join(errs, "; "))
	}
	if err := decodeInitializeResult(h.Result); err != nil {
		return Failf("initialize result does not decode: %v", err)
	}
	return nil
}

func checkAgentInfo(ctx context.Context, s *Session) error {
	h, err := s.Initialize(ctx)
	if err != nil {
		return err
	}
	if len(h.AgentInfo) == 0 || kindOf(h.AgentInfo) != "an object" {
		return Failf("initialize result has no agentInfo")
	}
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(h.AgentInfo, &info) != nil || info.Name == "" || info.Version == "" {
		return Failf("agentInfo lacks a name or version: %s", h.AgentInfo)
	}
	return nil
}

func checkUnknownMethod(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	for _, method := range []string{"acpcheck/no_such_method", "_acpcheck/no_such_method"} {
		m, err := s.Call(ctx, method, map[string]any{})
		if err != nil {
			return Failf("%s: %v", method, err)
		}
		if m.Error == nil {
			return Failf("%s answered %s, want error -32601", method, describe(m))
		}
		if m.Error.Code != -32601 {
			return Failf("%s answered %v, want -32601", method, m.Error)
		}
	}
	return nil
}

// strayResponses returns responses among msgs whose id is not one acpcheck
// used: the agent answered something it must not answer.
func strayResponses(msgs []*Message, ours map[string]bool) []*Message {
	var out []*Message
	for _, m := range msgs {
		if (m.IsResponse() || (!m.Invalid && m.Method == "" && m.HasID)) && !ours[string(bytes.TrimSpace(m.ID))] {
			out = append(out, m)
		}
	}
	return out
}

func checkUnknownNotification(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	from := s.Mark()
	if err := s.Notify("_acpcheck/unknown_notification", map[string]any{"probe": true}); err != nil {
		return Failf("%v", err)
	}
	id, m, err := s.ping(ctx)
	if errors.Is(err, ErrExited) {
		return Failf("the agent exited after an unknown extension notification")
	}
	if err != nil {
		return Failf("after an unknown extension notification: %v", err)
	}
	if stray := strayResponses(between(s.Since(from), m.Seq), map[string]bool{fmt.Sprint(id): true}); len(stray) > 0 {
		return Failf("agent answered the notification: %s", truncate(string(stray[0].Raw), 200))
	}
	return nil
}

func checkParseError(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	from := s.Mark()
	if err := s.WriteRaw([]byte(`{"jsonrpc":"2.0","id":99,"method":`)); err != nil {
		return Failf("%v", err)
	}
	id, m, err := s.ping(ctx)
	if errors.Is(err, ErrExited) {
		return Failf("the agent exited after a non-JSON line")
	}
	if err != nil {
		return Failf("after a non-JSON line: %v", err)
	}
	for _, r := range strayResponses(between(s.Since(from), m.Seq), map[string]bool{fmt.Sprint(id): true}) {
		if r.Error == nil || r.Error.Code != -32700 {
			return Failf("non-JSON line answered with %s, want -32700 or nothing", truncate(string(r.Raw), 200))
		}
		if r.HasID && string(bytes.TrimSpace(r.ID)) != "null" {
			return Failf("-32700 answer carries id %s, want null", r.ID)
		}
	}
	return nil
}

func checkNewSession(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	_, err := s.NewSession(ctx)
	return err
}

func checkUnknownSession(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	m, err := s.Call(ctx, gen.MethodSessionPrompt, PromptParams(UnknownSessionID, TurnPrompt))
	if err != nil {
		return Failf("session/prompt for an unknown session: %v", err)
	}
	if m.Error == nil {
		return Failf("session/prompt for unknown session %q answered %s, want an error", UnknownSessionID, describe(m))
	}
	return nil
}

func checkUpdatesBeforeResponse(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	turn, err := s.Prompt(ctx, sid, TurnPrompt)
	if err != nil {
		return err
	}
	// A barrier: whatever the agent sends before answering this request was
	// sent, in wire order, after the prompt response.
	after := turn.Response.Seq + 1
	if _, _, err := s.ping(ctx); err != nil {
		return Failf("barrier request after the turn: %v", err)
	}
	for _, u := range Updates(s.Since(after)) {
		if u.SessionID == sid && turnUpdates[u.Kind] {
			return Failf("%s for the turn arrived after the prompt response", u.Kind)
		}
	}
	return nil
}

// cancelledTurn starts a long turn in a new session, cancels it with
// session/cancel once it is under way, and returns the session and how
// the turn ended.
func cancelledTurn(ctx context.Context, s *Session) (string, *Turn, error) {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return "", nil, err
	}
	from, id, err := startLongTurn(ctx, s, sid)
	if err != nil {
		return "", nil, err
	}
	if err := s.Notify(gen.MethodSessionCancel, map[string]any{"sessionId": sid}); err != nil {
		return "", nil, Failf("%v", err)
	}
	turn, err := s.finishTurn(ctx, from, id)
	return sid, turn, err
}

func checkCancel(ctx context.Context, s *Session) error {
	_, turn, err := cancelledTurn(ctx, s)
	if err != nil {
		return err
	}
	if turn.StopReason != string(gen.StopReasonCancelled) {
		return Failf("cancelled turn ended with stopReason %q, want \"cancelled\"", turn.StopReason)
	}
	return nil
}

func checkSessionIDs(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	turn, err := s.Prompt(ctx, sid, TurnPrompt)
	if err != nil {
		return prereq(err)
	}
	for _, u := range Updates(between(s.Since(turn.From), turn.Response.Seq)) {
		if u.SessionID != sid {
			return Failf("a %s during the turn names session %q, not the prompted %q", u.Kind, u.SessionID, sid)
		}
	}
	return nil
}

func checkCancelRequest(ctx context.Context, s *Session) error {
	sid, err := setupSession(ctx, s)
	if err != nil {
		return err
	}
	_, id, err := startLongTurn(ctx, s, sid)
	if err != nil {
		return err
	}
	if err := s.Notify("$/cancel_request", map[string]any{"requestId": id}); err != nil {
		return Failf("%v", err)
	}
	m, err := s.Await(ctx, id)
	if err != nil {
		return Failf("after $/cancel_request, session/prompt: %v", err)
	}
	if m.Error != nil && m.Error.Code != -32800 {
		return Failf("cancelled request answered %v, want a result or -32800", m.Error)
	}
	return nil
}

// startLongTurn sends the cancel prompt and waits until the turn is
// visibly under way (its first update), so a cancellation cannot overtake
// the prompt inside the agent. It returns the mark before the prompt and
// the prompt's request id.
func startLongTurn(ctx context.Context, s *Session, sid string) (int, int64, error) {
	from := s.Mark()
	id, err := s.Send(gen.MethodSessionPrompt, PromptParams(sid, CancelPrompt))
	if err != nil {
		return 0, 0, Failf("%v", err)
	}
	want := fmt.Sprint(id)
	first, err := s.WaitFor(ctx, from, func(m *Message) bool {
		if m.IsResponse() {
			return string(bytes.TrimSpace(m.ID)) == want
		}
		us := Updates([]*Message{m})
		return len(us) == 1 && us[0].SessionID == sid && turnUpdates[us[0].Kind]
	})
	if err != nil {
		return 0, 0, Failf("waiting for the turn to start: %v", err)
	}
	if first.IsResponse() {
		if first.Error != nil && ModelUnavailable(first.Error.Code) {
			return 0, 0, NeedsModelf("session/prompt answered %v", first.Error)
		}
		return 0, 0, Skipf("the turn ended (%s) before it could be cancelled", describe(first))
	}
	return from, id, nil
}

// priorTurn creates a session and runs one turn so there is a conversation
// to load or resume.
func priorTurn(ctx context.Context, s *Session) (string, error) {
	sid, err := s.NewSession(ctx)
	if err != nil {
		return "", err
	}
	if _, err := s.Prompt(ctx, sid, TurnPrompt); err != nil {
		return "", err
	}
	return sid, nil
}

func sessionParams(s *Session, sid string) map[string]any {
	return map[string]any{"sessionId": sid, "cwd": s.Cwd, "mcpServers": []any{}}
}

func checkLoad(ctx context.Context, s *Session) error {
	if _, err := gated(ctx, s, GateLoadSession); err != nil {
		return err
	}
	sid, err := priorTurn(ctx, s)
	if err != nil {
		return prereq(err)
	}
	from := s.Mark()
	m, err := s.Call(ctx, gen.MethodSessionLoad, sessionParams(s, sid))
	if err != nil {
		return Failf("session/load: %v", err)
	}
	if m.Error != nil {
		return Failf("session/load answered %v", m.Error)
	}
	for _, u := range Updates(between(s.Since(from), m.Seq)) {
		if u.SessionID == sid && replayUpdates[u.Kind] {
			return nil
		}
	}
	return Failf("session/load responded without replaying the conversation first")
}

func checkResume(ctx context.Context, s *Session) error {
	if _, err := gated(ctx, s, GateResume); err != nil {
		return err
	}
	sid, err := priorTurn(ctx, s)
	if err != nil {
		return prereq(err)
	}
	from := s.Mark()
	m, err := s.Call(ctx, gen.MethodSessionResume, sessionParams(s, sid))
	if err != nil {
		return Failf("session/resume: %v", err)
	}
	if m.Error != nil {
		return Failf("session/resume answered %v", m.Error)
	}
	for _, u := range Updates(between(s.Since(from), m.Seq)) {
		if u.SessionID == sid && replayUpdates[u.Kind] {
			return Failf("session/resume replayed the conversation (%s)", u.Kind)
		}
	}
	return nil
}

func checkClose(ctx context.Context, s *Session) error {
	_, sid, err := gatedSession(ctx, s, GateClose)
	if err != nil {
		return err
	}
	m, err := s.Call(ctx, gen.MethodSessionClose, map[string]any{"sessionId": sid})
	if err != nil {
		return Failf("session/close: %v", err)
	}
	if m.Error != nil {
		return Failf("session/close answered %v", m.Error)
	}
	// A closed session is gone: a prompt for it is an error, not a turn.
	m, err = s.Call(ctx, gen.MethodSessionPrompt, PromptParams(sid, TurnPrompt))
	if err != nil {
		return Failf("session/prompt for the closed session: %v", err)
	}
	if m.Error == nil {
		return Failf("session/prompt for the closed session %q answered %s, want an error", sid, describe(m))
	}
	return nil
}

func checkDelete(ctx context.Context, s *Session) error {
	_, sid, err := gatedSession(ctx, s, GateDelete)
	if err != nil {
		return err
	}
	// The session itself, then the same id again (delete is idempotent),
	// then an id nobody created: the last two succeed or are -32002.
	for i, id := range []string{sid, sid, UnknownSessionID} {
		m, err := s.Call(ctx, gen.MethodSessionDelete, map[string]any{"sessionId": id})
		if err != nil {
			return Failf("session/delete %q: %v", id, err)
		}
		if m.Error == nil || i > 0 && m.Error.Code == CodeResourceNotFound {
			continue
		}
		switch i {
		case 0:
			return Failf("session/delete %q answered %v", id, m.Error)
		case 1:
			return Failf("session/delete %q a second time answered %v, want success or -32002", id, m.Error)
		default:
			return Failf("session/delete of unknown id %q answered %v, want success or -32002", id, m.Error)
		}
	}
	return nil
}

func checkStdinClose(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	s.CloseStdin()
	if !s.WaitExit(s.ExitBound) {
		return Failf("still running %v after its stdin closed", s.ExitBound)
	}
	return nil
}

func checkTerminate(ctx context.Context, s *Session) error {
	if _, err := s.Initialize(ctx); err != nil {
		return prereq(err)
	}
	if err := s.Terminate(); err != nil {
		return Failf("sending %s: %v", signalName, err)
	}
	if !s.WaitExit(s.ExitBound) {
		return Failf("still running %v after %s", s.ExitBound, signalName)
	}
	return nil
}

// setupSession initializes and creates a session, both as prerequisites.
func setupSession(ctx context.Context, s *Session) (string, error) {
	if _, err := s.Initialize(ctx); err != nil {
		return "", prereq(err)
	}
	sid, err := s.NewSession(ctx)
	return sid, prereq(err)
}

// prereq turns the failure of a step another check grades (initialize,
// session/new, a plain prompt turn) into a skip, so each broken requirement
// fails exactly one check.
func prereq(err error) error {
	if o, ok := asOutcome(err); ok && o.status == StatusFail {
		return Skipf("prerequisite failed: %s", o.reason)
	}
	return err
}

// PingMethod is the request acpcheck uses to prove the agent still answers:
// any response, even an error, will do.
const PingMethod = "acpcheck/ping"

// ping sends PingMethod and waits for any response.
func (s *Session) ping(ctx context.Context) (int64, *Message, error) {
	id, err := s.Send(PingMethod, map[string]any{})
	if err != nil {
		return 0, nil, err
	}
	m, err := s.Await(ctx, id)
	return id, m, err
}
