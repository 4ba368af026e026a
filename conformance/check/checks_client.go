package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// ClientStandard returns the registry of every client check acpcheck
// runs, in the order they are reported.
func ClientStandard() *Registry[*ClientRun] {
	r := NewRegistry[*ClientRun](RoleClient)
	for _, c := range clientChecks {
		r.Register(c)
	}
	return r
}

// clientChecks are the client checks in report order. Pins cite the
// pinned schema (schema/v1/schema.json: a definition and what its text
// says), the protocol's documents, or the project's protocol notes
// (docs/…/protocol.md, "protocol.md §N").
var clientChecks = []Check[*ClientRun]{
	{ID: "session.turn", Tier: TierMandatory,
		Title: "a plain turn (one text chunk, end_turn) runs to its end: the client waits for the prompt's answer, then ends its run by itself with status 0",
		Pins:  "schema PromptResponse: the agent's answer ends the turn; protocol.md §6: all updates of a turn precede the session/prompt response",
		Run:   checkClientTurn},
	{ID: "handshake.initialize", Tier: TierMandatory,
		Title: "the first message is an initialize request asking for protocol version 1",
		Pins:  "schema InitializeRequest: sent by the client to establish connection and negotiate capabilities; protocolVersion: the latest version the client supports (v1 is 1, protocol.md §3)",
		Run:   checkClientInitialize},
	{ID: "handshake.client-info", Tier: TierAdvisory,
		Title: "initialize names the client (clientInfo)",
		Pins:  "schema InitializeRequest.clientInfo: optional in v1; in future versions of the protocol, required",
		Run:   checkClientInfo},
	{ID: "handshake.version-mismatch", Tier: TierMandatory,
		Title: "answered a protocol version it did not ask for, the client sends no further request and disconnects",
		Pins:  "schema InitializeResponse.protocolVersion: the client should disconnect if it doesn't support this version; protocol.md §3: no renegotiation",
		Run:   checkClientVersionMismatch},
	{ID: "handshake.unknown-capabilities", Tier: TierMandatory,
		Title: "an initialize answer with members the schema does not define (capabilities, _meta, top level) is accepted: the client carries on with its session and turn",
		Pins:  "schema ProtocolVersion: non-breaking changes are introduced via capabilities; protocol.md §6: real responses carry fields the pinned schema does not know, and decoding must tolerate them",
		Run:   checkClientUnknownCapabilities},
	{ID: "session.cwd-absolute", Tier: TierMandatory,
		Title: "session/new (and session/load, session/resume) carry an absolute cwd",
		Pins:  "schema NewSessionRequest.cwd, LoadSessionRequest.cwd, ResumeSessionRequest.cwd: must be an absolute path",
		Run:   checkClientCwd},
	{ID: "client.unadvertised-methods", Tier: TierMandatory,
		Title: "each fs/* and terminal/* method the client did not advertise is answered with an error, and the turn carries on (a client that advertises them all has nothing to refuse)",
		Pins:  "schema ReadTextFileRequest, WriteTextFileRequest: only available if the client supports the fs capability; CreateTerminalRequest: only if the terminal capability is true",
		Run:   checkClientUnadvertised},
	{ID: "fs.read", Tier: TierCapability, Gate: GateClientFsRead,
		Title: "fs/read_text_file of an absolute path in the session's cwd answers the file's content",
		Pins:  "schema ReadTextFileRequest.path: absolute path to the file to read; ReadTextFileResponse.content",
		Run:   checkClientFsRead},
	{ID: "fs.write", Tier: TierCapability, Gate: GateClientFsWrite,
		Title: "fs/write_text_file of an absolute path in the session's cwd writes the content",
		Pins:  "schema WriteTextFileRequest: request to write content to a text file; path: absolute path to the file to write",
		Run:   checkClientFsWrite},
	{ID: "fs.relative-path", Tier: TierAdvisory, Gate: GateClientFsRead,
		Title: "fs/read_text_file of a relative path is refused, not resolved against the client's own directory",
		Pins:  "schema ReadTextFileRequest.path: absolute path to the file to read",
		Run:   checkClientFsRelative},
	{ID: "permission.answered", Tier: TierMandatory,
		Title: "session/request_permission is answered: selected with an offered optionId, or cancelled",
		Pins:  "schema RequestPermissionResponse.outcome; SelectedPermissionOutcome.optionId: the ID of the option the user selected",
		Run:   checkClientPermission},
	{ID: "permission.cancelled", Tier: TierCapability, Gate: GateCancels,
		Title: "after the client sends session/cancel, every permission request of the turn (pending or arriving later) is answered cancelled",
		Pins:  "schema RequestPermissionOutcome cancelled: when a client sends session/cancel it MUST respond to all pending session/request_permission requests with the cancelled outcome",
		Run:   checkClientPermissionCancelled},
	{ID: "cancel.session-cancel", Tier: TierCapability, Gate: GateCancels,
		Title: "interrupted, the client cancels with session/cancel for its session (not only $/cancel_request) and keeps the connection open for the prompt's cancelled answer",
		Pins:  "schema CancelNotification: sent by the client to cancel an ongoing prompt turn; the agent then responds to session/prompt with cancelled; protocol.md §6: the client keeps accepting updates",
		Run:   checkClientCancel},
	{ID: "rpc.unknown-request", Tier: TierMandatory,
		Title: "a request for a method the client does not know (plain and _ extension) is answered -32601, and the turn carries on",
		Pins:  "schema ErrorCode -32601 Method not found; docs extensibility: unrecognized _ methods get -32601 (protocol.md §4)",
		Run:   checkClientUnknownRequest},
	{ID: "rpc.unknown-notification", Tier: TierMandatory,
		Title: "a notification the client does not know (plain and _ extension) is ignored: never answered, and the turn carries on",
		Pins:  "JSON-RPC 2.0: a notification is never answered; protocol.md §4: unknown notifications are ignored",
		Run:   checkClientUnknownNotification},
	{ID: "update.unknown-variant", Tier: TierMandatory,
		Title: "a session/update of a sessionUpdate kind the schema does not know is tolerated: the turn carries on",
		Pins:  "schema SessionUpdate (discriminator sessionUpdate); protocol.md §6: real responses carry variants the pinned schema does not know, and decoding must tolerate them",
		Run:   checkClientUnknownUpdate},
	{ID: "update.malformed", Tier: TierMandatory,
		Title: "a known session/update kind with a malformed payload (tool_call without toolCallId, a chunk whose content is a number) is tolerated: the turn carries on",
		Pins:  "schema SessionNotification; protocol.md §7 SDK-10: bad params get an answer, and none of it stops the connection",
		Run:   checkClientMalformedUpdate},
	{ID: "update.usage", Tier: TierMandatory,
		Title: "a usage_update is tolerated: the turn carries on",
		Pins:  "schema UsageUpdate: context window and cost update for a session (protocol.md §5: one of the eleven variants)",
		Run:   checkClientUsageUpdate},
	{ID: "update.foreign-session", Tier: TierMandatory,
		Title: "an update naming a session the client did not create is tolerated: the turn carries on",
		Pins:  "schema SessionNotification.sessionId: the ID of the session this update pertains to",
		Run:   checkClientForeignUpdate},
	{ID: "update.before-session", Tier: TierMandatory,
		Title: "updates for the new session sent before the session/new response are tolerated: the turn carries on",
		Pins:  "protocol.md §6: real runtimes send updates outside turns (available_commands_update right after session/new, notifications before the session/new response)",
		Run:   checkClientEarlyUpdate},
	{ID: "update.after-response", Tier: TierMandatory,
		Title: "updates after the prompt response (session_info_update, a chunk) are tolerated: the client ends its run as usual",
		Pins:  "protocol.md §6: real runtimes send session_info_update after a prompt response",
		Run:   checkClientLateUpdate},
	{ID: "wire.non-json", Tier: TierMandatory,
		Title: "a line that is not JSON does not end the connection: the turn carries on",
		Pins:  "schema ErrorCode -32700 Parse error; protocol.md §2: real peers differ on bad input; protocol.md §7 SDK-10: none of it stops the connection",
		Run:   checkClientNonJSON},
	{ID: "wire.oversize-line", Tier: TierMandatory,
		Title: "a line longer than the client's bound (--line-bound) does not kill it: a request sent next is answered, or the client ends the turn (reported failed) and its run in order, closing its agent's stdin and waiting for it",
		Pins:  "protocol.md §2: the spec sets no size limit; protocol.md §7 SDK-9: an oversize line is reported and skipped, not fatal",
		Run:   checkClientOversize},
	{ID: "shutdown.stdin", Tier: TierMandatory,
		Title: "the client ends its agent by closing the agent's stdin, not by killing it",
		Pins:  "no explicit text: stdio has no shutdown message (docs transports), so the end of stdin is how a client ends an agent",
		Run:   checkClientShutdownStdin},
	{ID: "shutdown.waits", Tier: TierMandatory,
		Title: "when the client exits its agent has ended: it waited for the agent to exit (or stopped it), never leaving it running",
		Pins:  "no explicit text: a client that launches its agent owns that process (adapter.md TD-4, TD-5: close stdin, await exit)",
		Run:   checkClientShutdownWaits},
	{ID: "session.continuation-unadvertised", Tier: TierMandatory,
		Title: "with neither loadSession nor sessionCapabilities.resume advertised, the client never calls session/load or session/resume",
		Pins:  "schema LoadSessionRequest: only available if the agent supports the loadSession capability; ResumeSessionRequest: only if it supports sessionCapabilities.resume",
		Run:   checkClientContinuationUnadvertised},
	{ID: "session.continuation-once", Tier: TierCapability, Gate: GateContinues,
		Title: "with both advertised, a client continuing a session calls session/load or session/resume for it, never both",
		Pins:  "schema ResumeSessionRequest: resumes an existing session without returning previous messages (unlike session/load): one route per continuation",
		Run:   checkClientContinuationOnce},
}

// pause waits d, or less when ctx ends: the scenario agent taking its
// time, as an agent winding down does.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// firstTurn records a run's first turn, played by play; later turns are
// plain.
type firstTurn struct {
	t *AgentTurn
}

func (f *firstTurn) play(play func(ctx context.Context, t *AgentTurn) error) func(context.Context, *AgentTurn) error {
	return func(ctx context.Context, t *AgentTurn) error {
		if f.t != nil {
			return PlainTurn(ctx, t)
		}
		f.t = t
		return play(ctx, t)
	}
}

// oddTurn is a first turn that sends a chunk, then odd, then — after
// AgentWindDown, so a client that dies of the odd part is seen gone
// before the turn's answer — a second chunk and end_turn.
func oddTurn(r *ClientRun, odd func(ctx context.Context, t *AgentTurn) error) func(context.Context, *AgentTurn) error {
	return func(ctx context.Context, t *AgentTurn) error {
		if err := t.Chunk(r.Marker("before")); err != nil {
			return err
		}
		if err := odd(ctx, t); err != nil {
			return err
		}
		pause(ctx, AgentWindDown)
		if err := t.Chunk(r.Marker("after")); err != nil {
			return err
		}
		return t.End(gen.StopReasonEndTurn)
	}
}

// endedWell judges how the client ended a run whose first turn t it
// should have seen through: it kept the connection open to the turn's
// answer, did not cancel, ended the connection by itself, and exited —
// with status 0 unless anyStatus. what names the odd part for reasons.
func endedWell(r *ClientRun, c *AgentConn, t *AgentTurn, what string, anyStatus bool) error {
	if t == nil {
		return Failf("the client never sent session/prompt%s", suffix(what))
	}
	if _, open := t.Answered(); !open {
		return Failf("the client ended the connection before the agent answered its prompt%s", suffix(what))
	}
	if m := cancelsAfter(c, t.Prompt.Seq); m != nil {
		return Failf("the client cancelled the turn (%s)%s", m.Method, suffix(what))
	}
	if !c.Ended() {
		return Failf("the client kept the agent's connection open %v after the turn ended%s", r.g.cfg.Timeout, suffix(what))
	}
	exited, code, _ := r.ClientExit()
	if !exited {
		return Failf("the client did not exit within %v of ending the connection%s", r.g.cfg.ExitBound, suffix(what))
	}
	if code != 0 && !anyStatus {
		return Failf("the client exited with status %d after a turn that ended end_turn%s", code, suffix(what))
	}
	return nil
}

// carriedOn is endedWell with status 0, plus: a client that showed the
// turn's text before the odd part showed the text after it too.
func carriedOn(r *ClientRun, c *AgentConn, t *AgentTurn, what string) error {
	if err := endedWell(r, c, t, what, false); err != nil {
		return err
	}
	if r.ShowedText(r.Marker("before")) && !r.ShowedText(r.Marker("after")) {
		return Failf("the client showed the turn's text before %s but not the text after it", what)
	}
	return nil
}

func suffix(what string) string {
	if what == "" {
		return ""
	}
	return " (after " + what + ")"
}

// cancelsAfter is the first cancellation (session/cancel or
// $/cancel_request) the client sent at or after position from.
func cancelsAfter(c *AgentConn, from int) *Message {
	for _, m := range c.Messages()[from:] {
		if m.IsNotification() && (m.Method == gen.MethodSessionCancel || m.Method == gen.MethodCancelRequest) {
			return m
		}
	}
	return nil
}

func checkClientTurn(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	// The turn takes a while, as a model's does: a client that does not
	// wait for the answer has ended the connection by then.
	c, err := r.Play(ctx, Scenario{Turn: f.play(oddTurn(r, func(context.Context, *AgentTurn) error { return nil }))})
	if err != nil {
		return err
	}
	return endedWell(r, c, f.t, "", false)
}

func checkClientInitialize(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	msgs := c.Messages()
	if len(msgs) == 0 {
		return Failf("the client sent its agent nothing")
	}
	first := msgs[0]
	if !first.IsRequest() || first.Method != gen.MethodInitialize {
		return Failf("the client's first message is %s, not an initialize request", describe(first))
	}
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	_ = json.Unmarshal(first.Params, &p)
	if v := string(bytes.TrimSpace(p.ProtocolVersion)); v != "1" {
		return Failf("initialize asks for protocolVersion %s, want 1", orAbsent(v))
	}
	return nil
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

func checkClientInfo(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	init, _ := c.Initialize()
	if init == nil {
		return Skipf("the client sent no initialize (graded by handshake.initialize)")
	}
	if p := clientInfo(init.Params); p.Name == "" {
		return Failf("initialize has no clientInfo.name")
	}
	return nil
}

func checkClientVersionMismatch(ctx context.Context, r *ClientRun) error {
	var answered int64
	c, err := r.Play(ctx, Scenario{Initialize: func(m *Message) map[string]any {
		var p struct {
			ProtocolVersion int64 `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		answered = min(max(p.ProtocolVersion, 1)+1, 65535)
		res := DefaultInitializeResult()
		res["protocolVersion"] = answered
		return res
	}})
	if err != nil {
		return err
	}
	init, _ := c.Initialize()
	if init == nil {
		return Skipf("the client sent no initialize (graded by handshake.initialize)")
	}
	for _, m := range c.Messages()[init.Seq+1:] {
		if m.IsRequest() {
			return Failf("the agent answered protocol version %d and the client carried on with %s", answered, m.Method)
		}
	}
	if !c.Ended() {
		return Failf("the agent answered protocol version %d and the client kept the connection open for %v", answered, r.g.cfg.Timeout)
	}
	return nil
}

// unknownMembers are members no schema version defines, on the
// initialize answer.
func withUnknownMembers(res map[string]any) map[string]any {
	caps := res["agentCapabilities"].(map[string]any)
	caps["acpcheckFutureCapability"] = map[string]any{"nested": []any{1, "two", map[string]any{"three": true}}}
	caps["acpcheckFlag"] = true
	caps["promptCapabilities"].(map[string]any)["acpcheckVideo"] = true
	caps["mcpCapabilities"].(map[string]any)["acpcheckQuic"] = true
	caps["sessionCapabilities"] = map[string]any{"acpcheckTeleport": map[string]any{}}
	caps["_meta"] = map[string]any{"acpcheck": map[string]any{"big": 123456789012345678}}
	res["acpcheckTopLevel"] = []any{"a", 1}
	res["_meta"] = map[string]any{"acpcheck": "opaque"}
	return res
}

func checkClientUnknownCapabilities(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	c, err := r.Play(ctx, Scenario{
		Initialize: func(*Message) map[string]any { return withUnknownMembers(DefaultInitializeResult()) },
		Turn:       f.play(PlainTurn),
	})
	if err != nil {
		return err
	}
	return endedWell(r, c, f.t, "an initialize answer with unknown members", false)
}

// sessionRequests are the client's session/new, session/load and
// session/resume requests.
func sessionRequests(c *AgentConn) []*Message {
	var out []*Message
	for _, m := range c.Messages() {
		if m.IsRequest() && (m.Method == gen.MethodSessionNew || m.Method == gen.MethodSessionLoad || m.Method == gen.MethodSessionResume) {
			out = append(out, m)
		}
	}
	return out
}

// sessionCwd is a session request's cwd.
func sessionCwd(m *Message) (string, bool) {
	var p struct {
		Cwd *string `json:"cwd"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Cwd == nil {
		return "", false
	}
	return *p.Cwd, true
}

func checkClientCwd(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	reqs := sessionRequests(c)
	if len(reqs) == 0 {
		return Failf("the client never sent session/new")
	}
	for _, m := range reqs {
		cwd, ok := sessionCwd(m)
		if !ok {
			return Failf("%s carries no cwd", m.Method)
		}
		if !filepath.IsAbs(cwd) {
			return Failf("%s carries the cwd %q, which is not absolute", m.Method, cwd)
		}
	}
	return nil
}

// unadvertisedCalls are the client methods client.unadvertised-methods
// tries, each with the capability that would make it available.
var unadvertisedCalls = []struct {
	gate, method string
	params       func(sid, dir string) map[string]any
}{
	{GateClientFsRead, gen.MethodFsReadTextFile, func(sid, dir string) map[string]any {
		return map[string]any{"sessionId": sid, "path": filepath.Join(dir, "acpcheck-unadvertised.txt")}
	}},
	{GateClientFsWrite, gen.MethodFsWriteTextFile, func(sid, dir string) map[string]any {
		return map[string]any{"sessionId": sid, "path": filepath.Join(dir, "acpcheck-unadvertised.txt"), "content": "acpcheck must not be able to write this\n"}
	}},
	{GateClientTerm, gen.MethodTerminalCreate, func(sid, dir string) map[string]any {
		return map[string]any{"sessionId": sid, "command": "acpcheck-must-not-run", "args": []string{}, "cwd": dir}
	}},
}

func checkClientUnadvertised(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	var tried []string
	c, err := r.Play(ctx, Scenario{Turn: f.play(oddTurn(r, func(ctx context.Context, t *AgentTurn) error {
		for _, u := range unadvertisedCalls {
			if t.C.Advertises(u.gate) {
				continue
			}
			tried = append(tried, u.method)
			m, err := t.C.Call(ctx, u.method, u.params(t.SessionID, r.Dir()))
			if err != nil {
				return Failf("the client never answered %s, which it did not advertise: %v", u.method, err)
			}
			if m.Error == nil {
				return Failf("the client answered %s with a result although it did not advertise %s", u.method, u.gate)
			}
		}
		return nil
	}))})
	if err != nil {
		return err
	}
	if _, statErr := os.Stat(filepath.Join(r.Dir(), "acpcheck-unadvertised.txt")); statErr == nil {
		return Failf("the client wrote the file of an fs/write_text_file it did not advertise")
	}
	return carriedOn(r, c, f.t, strings.Join(tried, ", "))
}

// fsPath is a path for an fs check in the session's cwd, which must be a
// directory on this machine.
func fsPath(t *AgentTurn, name string) (string, error) {
	var cwd string
	for _, m := range sessionRequests(t.C) {
		if d, ok := sessionCwd(m); ok {
			cwd = d
		}
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() || !filepath.IsAbs(cwd) {
		return "", Skipf("the session's cwd %q is not an absolute directory here, so there is nowhere to put a file for the client to read", cwd)
	}
	return filepath.Join(cwd, name), nil
}

func checkClientFsRead(ctx context.Context, r *ClientRun) error {
	content := "acpcheck wrote this line for fs/read_text_file\n" + r.Marker("file") + "\n"
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		path, err := fsPath(t, "acpcheck-read-"+r.token[:8]+".txt")
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return Skipf("cannot write %s for the client to read: %v", path, err)
		}
		defer os.Remove(path)
		m, err := t.C.Call(ctx, gen.MethodFsReadTextFile, map[string]any{"sessionId": t.SessionID, "path": path})
		if err != nil {
			return Failf("the client never answered fs/read_text_file: %v", err)
		}
		if m.Error != nil {
			return Failf("the client answered fs/read_text_file of %s, a file it advertised it can read, with %v", path, m.Error)
		}
		var res struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(m.Result, &res) != nil || res.Content == nil {
			return Failf("fs/read_text_file's answer has no content: %s", truncate(string(m.Result), 200))
		}
		if *res.Content != content {
			return Failf("fs/read_text_file answered %q, the file holds %q", truncate(*res.Content, 200), content)
		}
		return t.End(gen.StopReasonEndTurn)
	})})
	return err
}

func checkClientFsWrite(ctx context.Context, r *ClientRun) error {
	content := "acpcheck asked the client to write this\n" + r.Marker("file") + "\n"
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		path, err := fsPath(t, "acpcheck-write-"+r.token[:8]+".txt")
		if err != nil {
			return err
		}
		defer os.Remove(path)
		m, err := t.C.Call(ctx, gen.MethodFsWriteTextFile, map[string]any{"sessionId": t.SessionID, "path": path, "content": content})
		if err != nil {
			return Failf("the client never answered fs/write_text_file: %v", err)
		}
		if m.Error != nil {
			return Failf("the client answered fs/write_text_file of %s, which it advertised, with %v", path, m.Error)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			return Failf("the client answered fs/write_text_file with success, but %s cannot be read: %v", path, err)
		}
		if string(got) != content {
			return Failf("after fs/write_text_file %s holds %q, want %q", path, truncate(string(got), 200), content)
		}
		return t.End(gen.StopReasonEndTurn)
	})})
	return err
}

func checkClientFsRelative(ctx context.Context, r *ClientRun) error {
	name := "acpcheck-relative-" + r.token[:8] + ".txt"
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		// The file exists where a careless client would look: its own
		// directory and the session's.
		for _, dir := range []string{r.Dir(), filepath.Dir(must(fsPath(t, name)))} {
			if dir == "." {
				continue
			}
			p := filepath.Join(dir, name)
			if os.WriteFile(p, []byte("acpcheck: a relative path must not reach this file\n"), 0o644) == nil {
				defer os.Remove(p)
			}
		}
		m, err := t.C.Call(ctx, gen.MethodFsReadTextFile, map[string]any{"sessionId": t.SessionID, "path": name})
		if err != nil {
			return Failf("the client never answered fs/read_text_file of a relative path: %v", err)
		}
		if m.Error == nil {
			return Failf("the client read the relative path %q (answered %s) instead of refusing it", name, truncate(string(m.Result), 120))
		}
		return t.End(gen.StopReasonEndTurn)
	})})
	return err
}

// must drops the error of a path lookup whose failure the caller has no
// use for (an empty path then).
func must(p string, _ error) string { return p }

// permissionOutcome checks an answer to a session/request_permission and
// returns its outcome ("selected" or "cancelled").
func permissionOutcome(m *Message) (string, error) {
	if m.Error != nil {
		return "", Failf("the client answered session/request_permission with %v, not an outcome", m.Error)
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return "", Failf("the answer to session/request_permission does not decode: %s", truncate(string(m.Result), 200))
	}
	switch res.Outcome.Outcome {
	case gen.RequestPermissionOutcomeCancelledTag:
		return res.Outcome.Outcome, nil
	case gen.RequestPermissionOutcomeSelectedTag:
		offered := slices.ContainsFunc(PermissionOptions(), func(o map[string]any) bool { return o["optionId"] == res.Outcome.OptionID })
		if !offered {
			return "", Failf("the client selected the option %q, which the request did not offer", res.Outcome.OptionID)
		}
		return res.Outcome.Outcome, nil
	}
	return "", Failf("the answer to session/request_permission has the outcome %q, neither selected nor cancelled", res.Outcome.Outcome)
}

func checkClientPermission(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		if err := t.Chunk(r.Marker("before")); err != nil {
			return err
		}
		m, err := t.C.Call(ctx, gen.MethodSessionRequestPermission, map[string]any{
			"sessionId": t.SessionID,
			"toolCall":  map[string]any{"toolCallId": "acpcheck-tool-1", "title": "acpcheck asks before a tool call", "kind": "edit", "status": "pending"},
			"options":   PermissionOptions(),
		})
		if err != nil {
			return Failf("the client never answered session/request_permission: %v", err)
		}
		if _, err := permissionOutcome(m); err != nil {
			return err
		}
		return t.End(gen.StopReasonEndTurn)
	})})
	return err
}

// permissionHold is how long permission.cancelled waits for a first
// permission request's answer before interrupting the client: a client
// that asks a person holds it open, and the cancel then finds it pending.
func permissionHold(r *ClientRun) time.Duration { return min(r.g.cfg.Timeout/4, 2*time.Second) }

// awaitCancel interrupts the client and waits for it to cancel the turn.
// It returns the session/cancel (nil when only $/cancel_request came,
// which is then returned as cancelRequest), or a skip when the client
// does not cancel when interrupted (learned for the other checks).
func awaitCancel(ctx context.Context, r *ClientRun, t *AgentTurn) (cancel, cancelRequest *Message, err error) {
	from := t.Prompt.Seq
	if err := r.InterruptClient(); err != nil {
		return nil, nil, Skipf("cannot interrupt the client: %v", err)
	}
	first, werr := t.C.WaitFor(ctx, from, func(m *Message) bool {
		return m.IsNotification() && (m.Method == gen.MethodSessionCancel || m.Method == gen.MethodCancelRequest)
	})
	if werr != nil {
		r.Learn(GateCancels, false)
		return nil, nil, Skipf("the client did not cancel its turn when interrupted (%s): %v", interruptName, werr)
	}
	r.Learn(GateCancels, true)
	if first.Method == gen.MethodSessionCancel {
		return first, nil, nil
	}
	cancel, _ = t.C.WaitFor(ctx, first.Seq+1, func(m *Message) bool {
		return m.IsNotification() && m.Method == gen.MethodSessionCancel
	})
	return cancel, first, nil
}

func checkClientPermissionCancelled(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		if err := t.Chunk(r.Marker("before")); err != nil {
			return err
		}
		first, err := t.SendPermission("acpcheck-tool-1")
		if err != nil {
			return err
		}
		answeredFirst := func(m *Message) bool { return m.IsResponse() && string(m.ID) == fmt.Sprint(first) }
		held := !r.wait(ctx, permissionHold(r), func() bool {
			return slices.ContainsFunc(t.C.msgs, answeredFirst)
		})
		cancel, _, err := awaitCancel(ctx, r, t)
		if err != nil {
			_ = t.End(gen.StopReasonCancelled)
			return err
		}
		if cancel == nil {
			_ = t.End(gen.StopReasonCancelled)
			return Skipf("the client cancelled with $/cancel_request only, not session/cancel (graded by cancel.session-cancel)")
		}
		// A request that crosses the cancel on the wire: the client has
		// cancelled, so it must answer it cancelled too.
		second, err := t.SendPermission("acpcheck-tool-2")
		if err != nil {
			return err
		}
		for _, req := range []struct {
			id   int64
			name string
		}{{first, "the permission request pending at the cancel"}, {second, "the permission request sent after the cancel"}} {
			if req.id == first && !held {
				// Answered before the interrupt; only an answer after
				// the cancel is held to the rule.
				if m, _ := t.C.WaitFor(ctx, 0, answeredFirst); m != nil && m.Seq < cancel.Seq {
					continue
				}
			}
			want := fmt.Sprint(req.id)
			m, err := t.C.WaitFor(ctx, 0, func(m *Message) bool { return m.IsResponse() && string(m.ID) == want })
			if err != nil {
				return Failf("the client never answered %s: %v", req.name, err)
			}
			outcome, err := permissionOutcome(m)
			if err != nil {
				return err
			}
			if outcome != gen.RequestPermissionOutcomeCancelledTag {
				return Failf("after its session/cancel the client answered %s %s, not cancelled", req.name, outcome)
			}
		}
		return t.End(gen.StopReasonCancelled)
	})})
	return err
}

func checkClientCancel(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	_, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		if err := t.Chunk(r.Marker("before")); err != nil {
			return err
		}
		cancel, cancelRequest, err := awaitCancel(ctx, r, t)
		if err != nil {
			_ = t.End(gen.StopReasonCancelled)
			return err
		}
		if cancel == nil {
			_ = t.End(gen.StopReasonCancelled)
			return Failf("the client cancelled with $/cancel_request only (%s), never session/cancel", truncate(string(cancelRequest.Raw), 200))
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(cancel.Params, &p)
		if p.SessionID != t.SessionID {
			_ = t.End(gen.StopReasonCancelled)
			return Failf("session/cancel names the session %q, the turn's is %q", p.SessionID, t.SessionID)
		}
		// The agent winds down before it answers, as a real one does.
		pause(ctx, AgentWindDown)
		if err := t.Chunk(r.Marker("after-cancel")); err != nil {
			return err
		}
		return t.End(gen.StopReasonCancelled)
	})})
	if err != nil {
		return err
	}
	if _, open := f.t.Answered(); !open {
		return Failf("the client ended the connection before the agent answered the cancelled prompt")
	}
	return nil
}

func checkClientUnknownRequest(ctx context.Context, r *ClientRun) error {
	return oddCheck(ctx, r, "requests for unknown methods", func(ctx context.Context, t *AgentTurn) error {
		for _, method := range []string{"_acpcheck/unknown", "acpcheck/unknown"} {
			m, err := t.C.Call(ctx, method, map[string]any{"sessionId": t.SessionID})
			if err != nil {
				return Failf("the client never answered the request for the unknown method %s: %v", method, err)
			}
			if m.Error == nil {
				return Failf("the client answered the unknown method %s with a result, not -32601", method)
			}
			if m.Error.Code != -32601 {
				return Failf("the client answered the unknown method %s with %v, want -32601", method, m.Error)
			}
		}
		return nil
	})
}

func checkClientUnknownNotification(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	c, err := r.Play(ctx, Scenario{Turn: f.play(oddTurn(r, func(ctx context.Context, t *AgentTurn) error {
		for _, method := range []string{"_acpcheck/notice", "acpcheck/notice"} {
			if err := t.C.Notify(method, map[string]any{"sessionId": t.SessionID, "acpcheck": true}); err != nil {
				return err
			}
		}
		return nil
	}))})
	if err != nil {
		return err
	}
	// The scenario sends the client no request here, so any response the
	// client sent answers a notification.
	for _, m := range c.Messages() {
		if m.IsResponse() {
			return Failf("the client answered a notification: %s", truncate(string(m.Raw), 200))
		}
	}
	return carriedOn(r, c, f.t, "unknown notifications")
}

// oddCheck runs a first turn with odd between its chunks and judges that
// the turn carried on.
func oddCheck(ctx context.Context, r *ClientRun, what string, odd func(ctx context.Context, t *AgentTurn) error) error {
	var f firstTurn
	c, err := r.Play(ctx, Scenario{Turn: f.play(oddTurn(r, odd))})
	if err != nil {
		return err
	}
	return carriedOn(r, c, f.t, what)
}

// updateCheck is oddCheck with updates for the odd part.
func updateCheck(ctx context.Context, r *ClientRun, what string, updates func(t *AgentTurn) error) error {
	return oddCheck(ctx, r, what, func(_ context.Context, t *AgentTurn) error { return updates(t) })
}

func checkClientUnknownUpdate(ctx context.Context, r *ClientRun) error {
	return updateCheck(ctx, r, "an update of an unknown kind", func(t *AgentTurn) error {
		return t.Update(map[string]any{"sessionUpdate": "acpcheck_unknown_variant", "acpcheck": map[string]any{"nested": []any{1, 2}}, "content": map[string]any{"type": "text", "text": "unknown variant"}})
	})
}

func checkClientMalformedUpdate(ctx context.Context, r *ClientRun) error {
	return updateCheck(ctx, r, "malformed updates", func(t *AgentTurn) error {
		if err := t.Update(map[string]any{"sessionUpdate": gen.SessionUpdateToolCallTag, "title": 42}); err != nil {
			return err
		}
		return t.Update(map[string]any{"sessionUpdate": gen.SessionUpdateAgentMessageChunkTag, "content": 7})
	})
}

func checkClientUsageUpdate(ctx context.Context, r *ClientRun) error {
	return updateCheck(ctx, r, "a usage_update", func(t *AgentTurn) error {
		return t.Update(map[string]any{"sessionUpdate": gen.SessionUpdateUsageUpdateTag, "used": 1234, "size": 200000, "cost": map[string]any{"amount": 0.01, "currency": "USD"}})
	})
}

func checkClientForeignUpdate(ctx context.Context, r *ClientRun) error {
	return updateCheck(ctx, r, "an update for another session", func(t *AgentTurn) error {
		return t.C.Update(r.marker+"-another-session", TextChunk(r.Marker("foreign")))
	})
}

func checkClientEarlyUpdate(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	c, err := r.Play(ctx, Scenario{
		NewSession: func(_ context.Context, c *AgentConn, _ *Message, sid string) error {
			if err := c.Update(sid, map[string]any{"sessionUpdate": gen.SessionUpdateAvailableCommandsUpdateTag, "availableCommands": []any{}}); err != nil {
				return err
			}
			return c.Update(sid, TextChunk(r.Marker("early")))
		},
		Turn: f.play(oddTurn(r, func(context.Context, *AgentTurn) error { return nil })),
	})
	if err != nil {
		return err
	}
	return carriedOn(r, c, f.t, "updates before the session/new response")
}

func checkClientLateUpdate(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	c, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		if err := oddTurn(r, func(context.Context, *AgentTurn) error { return nil })(ctx, t); err != nil {
			return err
		}
		if err := t.Update(map[string]any{"sessionUpdate": gen.SessionUpdateSessionInfoUpdateTag, "title": "acpcheck"}); err != nil {
			return err
		}
		return t.Chunk(r.Marker("late"))
	})})
	if err != nil {
		return err
	}
	return carriedOn(r, c, f.t, "updates after the prompt response")
}

func checkClientNonJSON(ctx context.Context, r *ClientRun) error {
	return oddCheck(ctx, r, "a line that is not JSON", func(_ context.Context, t *AgentTurn) error {
		return t.C.Write([]byte("acpcheck: this line is not JSON {"))
	})
}

// oversizeLine is a session/update agent_message_chunk exactly n bytes
// long (a valid message, for a client whose bound it fits).
func oversizeLine(sessionID string, n int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`, sessionID)
	tail := `"}}}}`
	fill := max(n-len(head)-len(tail), 0)
	line := make([]byte, 0, len(head)+fill+len(tail))
	line = append(line, head...)
	line = append(line, bytes.Repeat([]byte("x"), fill)...)
	return append(line, tail...)
}

func checkClientOversize(ctx context.Context, r *ClientRun) error {
	var f firstTurn
	n := r.g.cfg.LineBound + 1
	what := fmt.Sprintf("a line of %d bytes", n)
	answered := false
	c, err := r.Play(ctx, Scenario{Turn: f.play(func(ctx context.Context, t *AgentTurn) error {
		if err := t.Chunk(r.Marker("before")); err != nil {
			return err
		}
		if err := t.C.Write(oversizeLine(t.SessionID, n)); err != nil {
			if errors.Is(err, ErrAgentClosed) {
				return nil // gone in the middle of the line: judged by how the run ended
			}
			return err
		}
		// Either the connection goes on — a request sent next is
		// answered, and the turn ends as usual — or the client ends the
		// turn at the line (reporting it failed) and its run in order.
		m, err := t.C.Call(ctx, "_acpcheck/ping", map[string]any{"sessionId": t.SessionID})
		if err != nil {
			return nil // judged by how the run ended
		}
		answered = m.Error != nil || m.Result != nil
		if err := t.Chunk(r.Marker("after")); err != nil && !errors.Is(err, ErrAgentClosed) {
			return err
		}
		if err := t.End(gen.StopReasonEndTurn); err != nil && !errors.Is(err, ErrAgentClosed) {
			return err
		}
		return nil
	})})
	if err != nil {
		return err
	}
	if f.t == nil {
		return Failf("the client never sent session/prompt")
	}
	if answered {
		return nil
	}
	exited, _, _ := r.ClientExit()
	stdinEnded, _ := c.StdinEnded()
	r.mu.Lock()
	left := len(r.leftRunning) > 0
	r.mu.Unlock()
	switch {
	case !exited:
		return Failf("after %s the client neither answered a request nor ended its run within the timeouts", what)
	case !stdinEnded:
		return Failf("after %s the client neither answered a request nor closed its agent's stdin", what)
	case left:
		return Failf("the client died of %s: it exited leaving its agent running, without answering a request sent after the line", what)
	}
	return nil
}

func checkClientShutdownStdin(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	if ended, _ := c.StdinEnded(); ended {
		return nil
	}
	gone, _, code := c.Gone()
	switch {
	case gone && code == nil:
		return Failf("the client killed its agent without closing the agent's stdin (signals: %s)", orNone(c.Signals()))
	case gone:
		return Failf("the agent ended without its stdin ending")
	}
	return Failf("the client never closed its agent's stdin (signals: %s)", orNone(c.Signals()))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func checkClientShutdownWaits(ctx context.Context, r *ClientRun) error {
	_, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	exited, _, _ := r.ClientExit()
	if !exited {
		return Failf("the client did not exit within %v of ending its run", r.g.cfg.ExitBound)
	}
	r.mu.Lock()
	left := slices.Clone(r.leftRunning)
	conns := slices.Clone(r.conns)
	r.mu.Unlock()
	// An agent still running when the client exited was left running —
	// unless it was killed after all (the client stopped it, and did not
	// wait for the corpse): it was then stopped, not left.
	for _, c := range conns {
		pid := strconv.Itoa(c.hello.PID)
		if !slices.Contains(left, pid) {
			continue
		}
		if _, _, code := c.Gone(); code != nil {
			return Failf("the client exited while its agent (pid %s) was still running, and the agent exited by itself later: the client did not wait for it", pid)
		}
	}
	return nil
}

func checkClientContinuationUnadvertised(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{})
	if err != nil {
		return err
	}
	for _, m := range sessionRequests(c) {
		if m.Method != gen.MethodSessionNew {
			return Failf("the client called %s, which the agent did not advertise", m.Method)
		}
	}
	return nil
}

func checkClientContinuationOnce(ctx context.Context, r *ClientRun) error {
	c, err := r.Play(ctx, Scenario{Initialize: func(*Message) map[string]any {
		res := DefaultInitializeResult()
		caps := res["agentCapabilities"].(map[string]any)
		caps["loadSession"] = true
		caps["sessionCapabilities"] = map[string]any{"resume": map[string]any{}}
		return res
	}})
	if err != nil {
		return err
	}
	routes := map[string][]string{} // session id → methods used
	for _, m := range sessionRequests(c) {
		if m.Method == gen.MethodSessionNew {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		routes[p.SessionID] = append(routes[p.SessionID], m.Method)
	}
	if len(routes) == 0 {
		r.Learn(GateContinues, false)
		return Skipf("the client continued no session (give it one to continue, such as acprun --resume ID)")
	}
	r.Learn(GateContinues, true)
	for sid, methods := range routes {
		if len(methods) > 1 {
			return Failf("the client continued the session %q %d times (%s)", sid, len(methods), strings.Join(methods, ", "))
		}
	}
	return nil
}
