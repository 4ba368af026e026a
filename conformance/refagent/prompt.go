package refagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// pngPixel is a 1×1 transparent PNG, the "image" word's content.
const pngPixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// turnRun is the state of one prompt turn while its script plays.
type turnRun struct {
	a     *Agent
	ctx   context.Context
	sid   string
	cwd   string // the session's directory, where "write" writes
	n     int    // the turn's number in its session, for message ids
	t     *turn
	reply strings.Builder // the agent text, kept for replay
	sent  int             // updates sent so far
	// refused: a permission request was answered with a reject option.
	refused bool
	// stopped: the turn ends here, at a refusal (--stop-at-refusal).
	stopped bool
}

func (r *turnRun) send(u map[string]any) error {
	r.sent++
	return r.a.t.write(r.ctx, update(r.sid, u))
}

func (r *turnRun) say(messageID string, parts ...string) error {
	for _, p := range parts {
		if err := r.send(chunk(gen.SessionUpdateAgentMessageChunkTag, messageID, p)); err != nil {
			return err
		}
		r.reply.WriteString(p)
	}
	return nil
}

func (r *turnRun) msgID(k int) string { return fmt.Sprintf("%s-t%d-m%d", r.sid, r.n, k) }

func toolCall(id, title, kind string) map[string]any {
	return map[string]any{"sessionUpdate": gen.SessionUpdateToolCallTag, "toolCallId": id, "title": title, "kind": kind, "status": "pending"}
}

func toolUpdate(id, status string, extra map[string]any) map[string]any {
	u := map[string]any{"sessionUpdate": gen.SessionUpdateToolCallUpdateTag, "toolCallId": id, "status": status}
	for k, v := range extra {
		u[k] = v
	}
	return u
}

func toolText(text string) []any {
	return []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": text}}}
}

// Prompt plays the turn its words and the --words flag script.
func (ta *typedAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	a := (*Agent)(ta)
	sid := string(p.SessionID)
	s, ok := a.store.get(sid)
	if !ok {
		if !a.opts.AcceptUnknownSession {
			return nil, errorf(acpsdk.CodeResourceNotFound, "session not found: %s", sid)
		}
		s = &Session{ID: sid}
	}
	if err := a.acceptContent(p.Prompt); err != nil {
		return nil, err
	}
	if a.opts.PromptError != 0 {
		return nil, withData(failure(a.opts.PromptError), ScriptFor(a.opts.Words, "").ErrorData)
	}
	var text strings.Builder
	for _, b := range p.Prompt {
		if t, ok := b.(*gen.ContentBlockText); ok {
			text.WriteString(t.Text)
		}
	}
	sc := ScriptFor(a.opts.Words, text.String())
	if sc.ErrorCode != 0 {
		return nil, withData(failure(sc.ErrorCode), sc.ErrorData)
	}
	t := &turn{cancelled: make(chan struct{})}
	a.mu.Lock()
	if a.broken[s.ID] {
		a.mu.Unlock()
		return nil, errorf(acpsdk.CodeInternalError, "a turn is still running in session %s (--stuck-after-cancel)", s.ID)
	}
	a.turns[s.ID] = t
	if a.pendingCancel[s.ID] {
		delete(a.pendingCancel, s.ID)
		t.cancel() // a cancel meant for no turn, applied to this one
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if a.turns[s.ID] == t {
			delete(a.turns, s.ID)
		}
		a.mu.Unlock()
	}()
	r := &turnRun{a: a, ctx: ctx, sid: s.ID, cwd: s.Cwd, n: len(a.store.history(s)) + 1, t: t}
	a.log.Info("turn started", "session_id", s.ID, "prompt", clip(text.String()))
	resp, err := r.play(sc, text.String())
	if a.opts.DropCancelledRequests && ctx.Err() != nil && a.ctx.Err() == nil {
		// $/cancel_request ended the turn, not the agent stopping: never
		// answer (until the agent stops).
		a.log.Warn("dropping a request cancelled with $/cancel_request", "session_id", s.ID)
		<-a.ctx.Done()
	}
	if err != nil {
		return nil, err
	}
	if a.opts.StuckAfterCancel && resp.StopReason == gen.StopReasonCancelled {
		a.mu.Lock()
		a.broken[s.ID] = true
		a.mu.Unlock()
	}
	if err := a.store.append(s, Exchange{User: text.String(), Agent: r.reply.String()}); err != nil {
		a.log.Error("saving the conversation", "session_id", s.ID, "error", err)
	}
	return resp, nil
}

// play runs the script in a fixed order, so every transcript is
// reproducible: thought, plan, misbehaviours, tools, permission,
// elicitation, unknown call, image, text, slow wait, usage.
func (r *turnRun) play(sc Script, prompt string) (*gen.PromptResponse, error) {
	a := r.a
	if sc.Thought {
		if err := r.send(chunk(gen.SessionUpdateAgentThoughtChunkTag, r.msgID(0), "Thinking about the request.")); err != nil {
			return nil, err
		}
	}
	if sc.Plan {
		if err := r.send(map[string]any{"sessionUpdate": gen.SessionUpdatePlanTag, "entries": []any{
			map[string]any{"content": "Read the request", "priority": "high", "status": "completed"},
			map[string]any{"content": "Answer it", "priority": "medium", "status": "in_progress"},
		}}); err != nil {
			return nil, err
		}
	}
	if sc.Exit != nil {
		if r.sent == 0 {
			if err := r.say(r.msgID(1), "Exiting mid-turn."); err != nil {
				return nil, err
			}
		}
		a.log.Warn("exiting mid-turn on request", "status", *sc.Exit)
		_ = a.t.conn.Flush(r.ctx) // the updates so far reach the client first
		a.exit(*sc.Exit)
		return nil, errExited // only reached when exit is not os.Exit (tests)
	}
	if sc.Garbage {
		if err := a.t.write(r.ctx, rawLine("refagent: this line is not JSON")); err != nil {
			return nil, err
		}
	}
	if sc.Oversize {
		if err := a.t.write(r.ctx, oversizeLine(r.sid, r.msgID(9), a.opts.OversizeBytes)); err != nil {
			return nil, err
		}
	}
	if sc.Foreign {
		if err := a.t.write(r.ctx, update(ForeignSessionID, chunk(gen.SessionUpdateAgentMessageChunkTag, "foreign-1", "This update names another session."))); err != nil {
			return nil, err
		}
	}
	if sc.UnknownUpdate {
		if err := r.send(map[string]any{"sessionUpdate": "refagent_custom_update", "detail": "a variant the schema does not know"}); err != nil {
			return nil, err
		}
	}
	if sc.MalformedUpdate {
		// A tool_call without its required toolCallId.
		if err := r.send(map[string]any{"sessionUpdate": gen.SessionUpdateToolCallTag, "title": "No id", "status": "pending"}); err != nil {
			return nil, err
		}
	}
	if sc.NullIDUpdate {
		line := map[string]any{"jsonrpc": "2.0", "id": nil, "method": gen.MethodSessionUpdate, "params": map[string]any{
			"sessionId": r.sid, "update": chunk(gen.SessionUpdateAgentMessageChunkTag, r.msgID(8), "Sent with a null id."),
		}}
		if err := a.t.write(r.ctx, line); err != nil {
			return nil, err
		}
		r.reply.WriteString("Sent with a null id.")
	}
	if sc.ToolNameWrongType {
		u := toolCall("named-1", "A tool with a numeric name", "other")
		u["name"] = 42
		if err := r.send(u); err != nil {
			return nil, err
		}
		if err := r.send(toolUpdate("named-1", "completed", map[string]any{"title": "Named tool done", "name": 42})); err != nil {
			return nil, err
		}
	}
	if sc.Tools {
		if err := r.tools(); err != nil {
			return nil, err
		}
		if err := r.clientTools(); err != nil {
			return nil, err
		}
	}
	if sc.Permission != "" {
		if err := r.permission(sc.Permission, sc.PermissionKind); err != nil {
			return nil, err
		}
	}
	if sc.Write && !r.stopped {
		if err := r.write(); err != nil {
			return nil, err
		}
	}
	if r.stopped {
		a.log.Info("turn ended at a refused permission", "session_id", r.sid)
		return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
	}
	if sc.Elicit {
		if err := r.elicit(); err != nil {
			return nil, err
		}
	}
	if sc.CallUnknown {
		err := a.t.side.Call(r.ctx, UnknownClientMethod, map[string]any{"sessionId": r.sid}, nil)
		if err := r.say(r.msgID(3), "Calling an unknown client method: "+outcomeText(err)); err != nil {
			return nil, err
		}
	}
	if sc.Image {
		if err := r.send(map[string]any{"sessionUpdate": gen.SessionUpdateAgentMessageChunkTag, "messageId": r.msgID(4),
			"content": map[string]any{"type": "image", "mimeType": "image/png", "data": pngPixel}}); err != nil {
			return nil, err
		}
	}
	var late []any
	if sc.Text {
		if err := r.say(r.msgID(1), "Hello", ", ", "from the reference agent."); err != nil {
			return nil, err
		}
		last := prompt
		if last == "" {
			last = "(nothing)"
		}
		if err := r.say(r.msgID(2), "You said: "); err != nil {
			return nil, err
		}
		if a.opts.LateUpdates {
			late = append(late, update(r.sid, chunk(gen.SessionUpdateAgentMessageChunkTag, r.msgID(2), last)))
			r.reply.WriteString(last)
		} else if err := r.say(r.msgID(2), last); err != nil {
			return nil, err
		}
	}
	cancelled := r.t.isCancelled()
	if sc.Slow {
		cancelled = r.slow(sc.IgnoreCancel)
	}
	stop := string(gen.StopReasonEndTurn)
	switch {
	case cancelled:
		stop = a.opts.CancelStopReason
	case r.refused && a.opts.CancelAfterRefusal:
		stop = "cancelled"
	case sc.StopReason != "":
		stop = sc.StopReason
	}
	resp := &gen.PromptResponse{StopReason: gen.StopReason(stop)}
	if sc.Usage {
		if err := r.send(map[string]any{"sessionUpdate": gen.SessionUpdateUsageUpdateTag, "used": 1234, "size": 200000}); err != nil {
			return nil, err
		}
		resp.Meta = json.RawMessage(`{"quota":{"token_count":{"input_tokens":120,"output_tokens":34}}}`)
	}
	if sc.After {
		late = append(late, update(r.sid, map[string]any{"sessionUpdate": "session_info_update", "title": "Reference agent session"}))
	}
	addAfter(r.ctx, late...)
	a.log.Info("turn ended", "session_id", r.sid, "stop_reason", stop)
	return resp, nil
}

// slow waits for session/cancel or --slow-for, reporting progress; it
// reports whether the turn was cancelled.
func (r *turnRun) slow(ignoreCancel bool) bool {
	deadline := time.NewTimer(r.a.opts.SlowFor)
	defer deadline.Stop()
	tick := time.NewTicker(slowTick)
	defer tick.Stop()
	cancelled := r.t.cancelled
	if ignoreCancel {
		cancelled = nil // a nil channel never fires: the cancel is ignored
	}
	for i := 1; ; i++ {
		select {
		case <-cancelled:
			return true
		case <-deadline.C:
			return false
		case <-r.ctx.Done():
			return true
		case <-tick.C:
			_ = r.say(r.msgID(5), fmt.Sprintf(" %d", i))
		}
	}
}

func (r *turnRun) tools() error {
	steps := []map[string]any{
		toolCall("read-1", "Read README.md", "read"),
		toolUpdate("read-1", "in_progress", nil),
		toolUpdate("read-1", "completed", map[string]any{"title": "Read README.md", "content": toolText("# README")}),
		toolCall("edit-1", "Edit main.go", "edit"),
		toolUpdate("edit-1", "in_progress", nil),
		toolUpdate("edit-1", "completed", map[string]any{"title": "Edited main.go"}),
		toolCall("exec-1", "Run the tests", "execute"),
		toolUpdate("exec-1", "in_progress", nil),
		toolUpdate("exec-1", "failed", map[string]any{"title": "Tests failed", "content": toolText("exit status 1")}),
	}
	for _, u := range steps {
		if err := r.send(u); err != nil {
			return err
		}
	}
	return nil
}

// clientTools calls the client's fs and terminal methods the tools word
// uses: only those the client offered, unless --ignore-client-capabilities.
func (r *turnRun) clientTools() error {
	a := r.a
	a.mu.Lock()
	caps := a.clientCaps
	a.mu.Unlock()
	ignore := a.opts.IgnoreClientCapabilities
	cwd := "/"
	if s, ok := a.store.get(r.sid); ok && s.Cwd != "" {
		cwd = s.Cwd
	}
	if caps.Fs.ReadTextFile || ignore {
		err := a.t.side.Call(r.ctx, gen.MethodFsReadTextFile, map[string]any{"sessionId": r.sid, "path": filepath.Join(cwd, "README.md")}, nil)
		if err := r.say(r.msgID(3), "Reading README.md through the client: "+outcomeText(err)); err != nil {
			return err
		}
	}
	if caps.Terminal || ignore {
		err := a.t.side.Call(r.ctx, gen.MethodTerminalCreate, map[string]any{"sessionId": r.sid, "command": "ls"}, nil)
		if err := r.say(r.msgID(3), " Running ls in a client terminal: "+outcomeText(err)); err != nil {
			return err
		}
	}
	return nil
}

func (r *turnRun) permission(kind, toolKind string) error {
	id, title := "perm-1", "Delete the build cache"
	if toolKind == "" {
		toolKind = "delete"
	} else {
		title = "Use a " + toolKind + " tool"
	}
	if err := r.send(toolCall(id, title, toolKind)); err != nil {
		return err
	}
	options := []any{
		map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
		map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	}
	if kind == "allow-only" {
		options = []any{
			map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
			map[string]any{"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
		}
	}
	allowed, verdict, err := r.askPermission(id, title, toolKind, options)
	if err != nil {
		return err
	}
	if r.stopped {
		return nil
	}
	status := "failed"
	if allowed {
		status = "completed"
	}
	if err := r.send(toolUpdate(id, status, map[string]any{"title": verdict})); err != nil {
		return err
	}
	return r.say(r.msgID(6), verdict)
}

// askPermission asks the client for a tool call's permission; it reports
// whether an allow option was selected, and the outcome in words. The error
// is --cancelled-permission-error's failure of the turn.
func (r *turnRun) askPermission(id, title, toolKind string, options []any) (bool, string, error) {
	var res json.RawMessage
	err := r.a.t.side.Call(r.ctx, gen.MethodSessionRequestPermission, map[string]any{
		"sessionId": r.sid,
		"toolCall":  map[string]any{"toolCallId": id, "title": title, "kind": toolKind, "status": "pending"},
		"options":   options,
	}, &res)
	var out struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if err != nil {
		return false, "permission request failed: " + outcomeText(err), nil
	}
	if json.Unmarshal(res, &out) != nil {
		return false, "permission answer did not decode", nil
	}
	if out.Outcome.Outcome != gen.RequestPermissionOutcomeSelectedTag {
		if r.a.opts.CancelledPermissionError && out.Outcome.Outcome == gen.RequestPermissionOutcomeCancelledTag {
			return false, "", errorf(acpsdk.CodeInternalError, "permission request cancelled (--cancelled-permission-error)")
		}
		return false, "permission outcome: " + out.Outcome.Outcome, nil
	}
	if strings.HasPrefix(out.Outcome.OptionID, "allow") {
		return true, "permission outcome: selected " + out.Outcome.OptionID, nil
	}
	r.refused = true
	r.stopped = r.a.opts.StopAtRefusal
	return false, "permission outcome: selected " + out.Outcome.OptionID, nil
}

// WriteFile is the file the "write" word writes in the session's
// directory, when the client allows it.
const WriteFile = "refagent-note.txt"

// write asks to write WriteFile (an edit) and writes it only when allowed,
// so a test can see the permission's side effect, or its absence.
func (r *turnRun) write() error {
	id, title := "write-1", "Write "+WriteFile
	if err := r.send(toolCall(id, title, "edit")); err != nil {
		return err
	}
	allowed, verdict, err := r.askPermission(id, title, "edit", []any{
		map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
		map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	})
	if err != nil {
		return err
	}
	if r.stopped {
		return nil
	}
	status := "failed"
	if allowed {
		status = "completed"
		path := filepath.Join(r.cwd, WriteFile)
		if err := os.WriteFile(path, []byte("written by the reference agent\n"), 0o644); err != nil {
			status, verdict = "failed", "writing "+WriteFile+": "+err.Error()
		} else {
			verdict = "wrote " + WriteFile
		}
	}
	if err := r.send(toolUpdate(id, status, map[string]any{"title": verdict})); err != nil {
		return err
	}
	return r.say(r.msgID(10), verdict)
}

func (r *turnRun) elicit() error {
	var res json.RawMessage
	err := r.a.t.side.Call(r.ctx, gen.MethodElicitationCreate, map[string]any{
		"sessionId": r.sid,
		"mode":      "form",
		"message":   "Which branch should I use?",
		"requestedSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"branch": map[string]any{"type": "string", "title": "Branch"}},
		},
	}, &res)
	verdict := "elicitation failed: " + outcomeText(err)
	if err == nil {
		verdict = "elicitation answered: " + string(res)
	}
	return r.say(r.msgID(7), verdict)
}

// outcomeText renders a call's error for the agent's reply text.
func outcomeText(err error) string {
	var e *acpsdk.Error
	switch {
	case err == nil:
		return "answered"
	case errors.As(err, &e):
		return fmt.Sprintf("error %d (%s)", e.Code, e.Message)
	default:
		return err.Error()
	}
}

// oversizeLine is a valid session/update whose text makes the line at
// least n bytes long.
func oversizeLine(sid, messageID string, n int) rawLine {
	prefix := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","messageId":%q,"content":{"type":"text","text":"`, sid, messageID)
	suffix := `"}}}}`
	pad := max(n-len(prefix)-len(suffix), 0)
	line := make([]byte, 0, len(prefix)+pad+len(suffix))
	line = append(line, prefix...)
	line = append(line, strings.Repeat("x", pad)...)
	return append(line, suffix...)
}
