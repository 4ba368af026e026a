package adapter

import (
	"context"
	"fmt"
	"slices"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/normalize"
)

// PermissionRequest is a runtime's session/request_permission as a
// PermissionHook sees it (PM-11).
type PermissionRequest struct {
	// SessionID is the session the request names.
	SessionID string
	// ToolCallID, Title and ToolKind describe the tool call the runtime
	// asks to run; ToolKind is normalized as tool results are (TC-3:
	// absent or unrecognised is "other") and Title is capped at 500 runes.
	ToolCallID string
	Title      string
	ToolKind   string
	// Options are the runtime's choices in the order it sent them; an
	// option without a readable id or kind is left out.
	Options []PermissionOption
}

// PermissionOption is one choice a permission request offers.
type PermissionOption struct {
	// ID is the optionId a decision selects.
	ID string
	// Name is the runtime's label for people.
	Name string
	// Kind is allow_once, allow_always, reject_once or reject_always (or
	// whatever else the runtime sent).
	Kind string
}

// Allows reports whether selecting the option grants the permission.
func (o PermissionOption) Allows() bool {
	return o.Kind == string(gen.PermissionOptionKindAllowOnce) || o.Kind == string(gen.PermissionOptionKindAllowAlways)
}

// refuses reports whether selecting the option refuses the permission.
func (o PermissionOption) refuses() bool {
	return o.Kind == string(gen.PermissionOptionKindRejectOnce) || o.Kind == string(gen.PermissionOptionKindRejectAlways)
}

// PermissionDecision is a PermissionHook's answer. The zero value refuses.
type PermissionDecision struct {
	// OptionID selects one of the request's options. Empty, or an id the
	// request did not offer, refuses exactly as PM-1 and PM-2 do.
	OptionID string
	// Reason says in a person's words why, for the decision's event: the
	// approval notice, or a refusal notice that replaces PM-1's
	// "unattended" wording (which would not be true of a person saying no).
	Reason string
}

// PermissionHook decides a permission request (PM-11). It runs on a
// goroutine of its own, never on the session's pump, so it may wait for a
// person; it must return once ctx ends, which happens when the turn ends,
// begins to end (a cancellation, a question only a person could answer) or
// the session stops — whatever it returns then is answered with the
// cancelled outcome (TU-8, TD-1). A request arriving between turns is
// decided the same way (PM-7).
type PermissionHook func(ctx context.Context, r PermissionRequest) PermissionDecision

// WithPermissionHook lets h decide every permission request instead of
// refusing it (PM-11). Without it — Sortie never sets it — every request is
// refused as PM-1 and PM-2 say. Every decision is an event: a notification
// beginning "approved a permission request: " for an approval, the refusal
// notices for a refusal. A refusal counts in TurnResult.PermissionsRefused
// (DI-11) and DI-10 applies to it as to PM-1's.
func WithPermissionHook(h PermissionHook) Option { return func(o *options) { o.permissionHook = h } }

// msgPermissionApproved begins the notice of an approval (PM-11); the
// refusal of a hook with a reason begins msgPermissionRefusedBy.
const (
	msgPermissionApproved  = "approved a permission request: "
	msgPermissionRefusedBy = "refused a permission request: "
)

// decodePermissionRequest reads a request for a hook; false when the
// params are unreadable, which is PM-2's case whatever a hook would say.
func decodePermissionRequest(params []byte, sessionID string) (PermissionRequest, bool) {
	var raw struct {
		SessionID string `json:"sessionId"`
		ToolCall  struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
			Kind       string `json:"kind"`
		} `json:"toolCall"`
		Options []struct {
			OptionID json.RawMessage `json:"optionId"`
			Name     json.RawMessage `json:"name"`
			Kind     json.RawMessage `json:"kind"`
		} `json:"options"`
	}
	if json.Unmarshal(params, &raw) != nil {
		return PermissionRequest{}, false
	}
	r := PermissionRequest{
		SessionID:  sessionID,
		ToolCallID: raw.ToolCall.ToolCallID,
		Title:      normalize.Cap(raw.ToolCall.Title),
		ToolKind:   normalize.ToolKind(raw.ToolCall.Kind),
	}
	if raw.SessionID != "" {
		r.SessionID = raw.SessionID
	}
	for _, o := range raw.Options {
		var opt PermissionOption
		if json.Unmarshal(o.OptionID, &opt.ID) != nil || json.Unmarshal(o.Kind, &opt.Kind) != nil {
			continue // as PM-1 reads options: id and kind only
		}
		_ = json.Unmarshal(o.Name, &opt.Name)
		opt.Name = normalize.Cap(opt.Name)
		r.Options = append(r.Options, opt)
	}
	return r, true
}

// chosen is the offered option a decision selects; false when it selects
// none of them.
func (r PermissionRequest) chosen(d PermissionDecision) (PermissionOption, bool) {
	if d.OptionID == "" {
		return PermissionOption{}, false
	}
	for _, o := range r.Options {
		if o.ID == d.OptionID {
			return o, true
		}
	}
	return PermissionOption{}, false
}

// approvedNotice is the event text of an approval.
func approvedNotice(r PermissionRequest, o PermissionOption, reason string) string {
	what := r.ToolKind
	if r.Title != "" {
		what += fmt.Sprintf(" %q", r.Title)
	}
	msg := fmt.Sprintf("%sselected %q (%s) for %s", msgPermissionApproved, o.Name, o.Kind, what)
	if reason != "" {
		msg += ": " + reason
	}
	return normalize.Cap(msg)
}

// pendingDecision is a permission request its hook is still deciding.
type pendingDecision struct {
	ask    permissionAsk
	perm   PermissionRequest
	turn   *turnState // the turn it arrived in; nil between turns
	cancel context.CancelFunc
}

// pumpDecided carries a hook's decision back to the pump.
type pumpDecided struct {
	d   *pendingDecision
	dec PermissionDecision
	// void: the hook's context had ended when it returned.
	void bool
}

// askHook hands a permission request to the hook on a goroutine of its
// own; false when the hook cannot take it (unreadable params: PM-2).
func (p *pump) askHook(m permissionAsk) bool {
	perm, ok := decodePermissionRequest(m.params, p.sessionID)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(p.ctx)
	d := &pendingDecision{ask: m, perm: perm, turn: p.turn, cancel: cancel}
	if t := p.turn; t != nil {
		stop := context.AfterFunc(t.ctx, cancel)
		d.cancel = func() { stop(); cancel() }
	}
	p.decisions = append(p.decisions, d)
	hook := p.s.a.permissionHook
	p.wg.Go(func() {
		dec := hook(ctx, perm)
		p.post(pumpDecided{d: d, dec: dec, void: ctx.Err() != nil})
	})
	return true
}

// decided answers a request with its hook's decision (PM-11).
func (p *pump) decided(m pumpDecided) {
	d := m.d
	if !p.forgetDecision(d) {
		return // answered already, at teardown
	}
	d.cancel()
	if t := d.turn; m.void || t != nil && (p.turn != t || t.ending || t.ctx.Err() != nil) {
		// Its turn ended or is ending (the caller's cancel may still be
		// on its way to the pump): TU-8's answer, no decision.
		p.answer(d.ask.reply, permissionCancelled, nil)
		return
	}
	d.ask.at = p.s.a.now() // the decision's events are dated when it was made
	o, ok := d.perm.chosen(m.dec)
	if !ok || !o.Allows() {
		reject := ""
		if ok && o.refuses() {
			reject = o.ID // the hook's own choice of a refusing option
		}
		p.refusePermission(d.ask, reject, m.dec.Reason)
		return
	}
	p.answer(d.ask.reply, permissionSelected(o.ID), nil)
	p.emit(p.norm.Emit(normalize.Event{Type: normalize.Notification, Time: d.ask.at, Message: approvedNotice(d.perm, o, m.dec.Reason)})...)
}

// forgetDecision removes d from the pending decisions; false when it was
// not there any more.
func (p *pump) forgetDecision(d *pendingDecision) bool {
	for i, x := range p.decisions {
		if x == d {
			p.decisions = append(p.decisions[:i], p.decisions[i+1:]...)
			return true
		}
	}
	return false
}

// cancelDecisions ends the hooks' waits: the turn is ending or ended, or
// the session is closing. Their decisions, when they come, are answered
// with the cancelled outcome (decided).
func (p *pump) cancelDecisions() {
	for _, d := range p.decisions {
		d.cancel()
	}
}

// answerDecisions gives every request still being decided its teardown
// answer (TD-1); the decisions that come later find nothing to answer.
func (p *pump) answerDecisions() {
	for _, d := range p.decisions {
		d.cancel()
		p.answer(d.ask.reply, permissionCancelled, nil)
	}
	p.decisions = nil
}

// noteRefusal records a refused permission request (PM-1, PM-2) on the
// open turn (DI-11), with the tool call it was for.
func (p *pump) noteRefusal(params []byte) {
	if t := p.turn; t != nil {
		t.refusals++
		t.updatedAfterRefusal = false
		var req struct {
			ToolCall struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"toolCall"`
		}
		if json.Unmarshal(params, &req) == nil && req.ToolCall.ToolCallID != "" {
			t.refusedCalls = append(t.refusedCalls, req.ToolCall.ToolCallID)
		}
	}
}

// noteUpdate records that a session update of this session was read
// (DI-11: did anything follow the last refusal?). Neither a refused tool
// call's own update counts (OpenCode and Qwen Code report the refused call
// failed, then end the turn) nor one announcing the session's state (Qwen
// Code's commands): only what the runtime did, or anything unknown.
func (p *pump) noteUpdate(variant string, update []byte) {
	t := p.turn
	if t == nil || t.refusals == 0 || t.updatedAfterRefusal || sessionState[variant] {
		return
	}
	if variant == gen.SessionUpdateToolCallUpdateTag {
		var u struct {
			ToolCallID string `json:"toolCallId"`
		}
		if json.Unmarshal(update, &u) == nil && slices.Contains(t.refusedCalls, u.ToolCallID) {
			return
		}
	}
	t.updatedAfterRefusal = true
}

// sessionState are the session updates that announce the session's state
// rather than anything the runtime did.
var sessionState = map[string]bool{
	gen.SessionUpdateAvailableCommandsUpdateTag: true,
	gen.SessionUpdateCurrentModeUpdateTag:       true,
	gen.SessionUpdateConfigOptionUpdateTag:      true,
	gen.SessionUpdateSessionInfoUpdateTag:       true,
	gen.SessionUpdateUsageUpdateTag:             true,
}
