package adapter

import (
	"context"
	"fmt"
	"slices"

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
// Members are read by their exact names, as PM-1 reads the options.
func decodePermissionRequest(params []byte, sessionID string) (PermissionRequest, bool) {
	opts, ok := permissionOptions(params)
	if !ok {
		return PermissionRequest{}, false
	}
	r := PermissionRequest{SessionID: sessionID, Options: opts}
	if id, _ := normalize.StringMember(params, "sessionId"); id != "" {
		r.SessionID = id
	}
	var kind string
	if tc, ok := normalize.Member(params, "toolCall"); ok {
		r.ToolCallID, _ = normalize.StringMember(tc, "toolCallId")
		title, _ := normalize.StringMember(tc, "title")
		r.Title = normalize.Cap(title)
		kind, _ = normalize.StringMember(tc, "kind")
	}
	r.ToolKind = normalize.ToolKind(kind)
	return r, true
}

// permissionOptions reads a permission request's options in sent order
// (PM-1, PM-11): an option is its optionId and kind, both strings, and its
// name; one without a string optionId or kind is left out. It reads no
// more: gen.RequestPermissionRequest rejects the whole request for one
// option missing its name or carrying an unknown kind, which would turn a
// PM-1 refusal into a PM-2 cancellation. False when the params are not an
// object or options is there but not an array of objects (PM-2).
func permissionOptions(params []byte) ([]PermissionOption, bool) {
	if !normalize.IsObject(params) {
		return nil, false
	}
	options, ok := normalize.Member(params, "options")
	if !ok {
		return nil, true
	}
	var opts []PermissionOption
	readable := true
	readable = normalize.Elements(options, func(o []byte) {
		if !normalize.IsObject(o) {
			readable = false
			return
		}
		id, idOK := normalize.StringMember(o, "optionId")
		kind, kindOK := normalize.StringMember(o, "kind")
		if !idOK || !kindOK {
			return
		}
		name, _ := normalize.StringMember(o, "name")
		opts = append(opts, PermissionOption{ID: id, Name: normalize.Cap(name), Kind: kind})
	}) && readable
	return opts, readable
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
	p.emit(p.norm.Emit(normalize.Event{Type: EventNotification, Time: d.ask.at, Message: approvedNotice(d.perm, o, m.dec.Reason)})...)
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
		tc, _ := normalize.Member(params, "toolCall")
		if id, _ := normalize.StringMember(tc, "toolCallId"); id != "" {
			t.refusedCalls = append(t.refusedCalls, id)
		}
	}
}

// noteUpdate records that a session update of this session was read
// (DI-11: did anything follow the last refusal?). Neither a refused tool
// call's own update counts (OpenCode and Qwen Code report the refused call
// failed, then end the turn) nor one announcing the session's state (Qwen
// Code's commands): only what the runtime did, or anything unknown.
func (p *pump) noteUpdate(variant, callID string, hasCallID bool) {
	t := p.turn
	if t == nil || t.refusals == 0 || t.updatedAfterRefusal || sessionState[variant] {
		return
	}
	if variant == gen.SessionUpdateToolCallUpdateTag {
		if hasCallID && slices.Contains(t.refusedCalls, callID) {
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
