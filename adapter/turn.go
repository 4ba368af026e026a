package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/normalize"
)

// turnRequest is RunTurn's side of the turn-start handshake (TU-2): the pump
// answers on accept (nil = started, else the refusal) unless RunTurn has
// given up and closed abandon first; the result comes on reply.
type turnRequest struct {
	ctx     context.Context
	onEvent func(Event)
	prompt  string
	accept  chan error
	abandon chan struct{}
	reply   chan turnReply
}

type turnReply struct {
	result TurnResult
	err    error
}

// turnState is the pump's open turn.
type turnState struct {
	ctx     context.Context
	onEvent func(Event)
	reply   chan turnReply
	// ending: an end attempt is pending (TU-7, PM-6) with this override.
	ending   bool
	override *normalize.Outcome
	timer    *time.Timer
	// call is the prompt in flight. Its answer ends the turn where it was
	// read (an InboundResponse); watchCall: the pump also watches call.Done, for
	// the one outcome that is not read from the runtime, a failed write.
	call      *acpsdk.PendingCall
	watchCall bool
	// writeFailed: the prompt could not be written; the turn waits up to
	// the read timeout for the stream's own end (TU-9).
	writeFailed  bool
	reachedModel bool
	// refusedPermission: a permission request was refused during the
	// turn (PM-1), which turns a cancelled stop into DI-10's ending.
	refusedPermission bool
	// refusals counts the permission requests refused during the turn
	// (PM-1, PM-2), refusedCalls are the tool calls they were for, and
	// updatedAfterRefusal: a session update other than a refused call's
	// own was read after the last of them (DI-11).
	refusals            int
	refusedCalls        []string
	updatedAfterRefusal bool
	// result: the prompt was answered with a decodable result whose
	// presence signal is bound (MS-5); drain is set while the turn is held
	// for its source (MS-6); accounted: a figure fully accounted for it.
	result    bool
	bound     int64
	drain     *drainState
	accounted bool
}

func (t *turnState) deliver(e Event) {
	if t.onEvent != nil {
		t.onEvent(e)
	}
}

// RunTurn sends one prompt on the session and relays its events to
// p.OnEvent until the turn ends (§13). OnEvent runs on the session's pump
// goroutine: it should return quickly and must not call StopSession. The returned error is non-nil
// exactly when the outcome is not turn_completed (DI-9); it is an *Error
// whose kind classifies the failure. When ctx ends during the turn the
// runtime is asked to cancel and the result is turn_cancelled (TU-7).
func (a *Adapter) RunTurn(ctx context.Context, sess Session, p TurnParams) (TurnResult, error) {
	s := sess.s
	if s == nil || s.pump == nil {
		err := newError(KindPortExit, msgSessionNotStarted, nil)
		return TurnResult{SessionID: sess.ID, Kind: err.Kind, Message: err.Message}, err
	}
	if !s.inTurn.CompareAndSwap(false, true) {
		err := newError(KindResponseError, msgTurnInFlight, nil)
		return TurnResult{SessionID: s.id, Kind: err.Kind, Message: err.Message}, err
	}
	defer s.inTurn.Store(false)
	if err := ctx.Err(); err != nil {
		return TurnResult{SessionID: s.id}, err // TU-2: no turn for a caller that gave up
	}

	req := &turnRequest{
		ctx:     ctx,
		onEvent: p.OnEvent,
		prompt:  p.Prompt,
		accept:  make(chan error),
		abandon: make(chan struct{}),
		reply:   make(chan turnReply, 1),
	}
	bound := time.NewTimer(s.readTimeout)
	defer bound.Stop()
	refuse := func(err error) (TurnResult, error) {
		r := TurnResult{SessionID: s.id}
		if e, ok := errors.AsType[*Error](err); ok {
			r.Kind, r.Message = e.Kind, e.Message
		}
		return r, err
	}
	timeout := func() (TurnResult, error) {
		return refuse(newError(KindResponseTimeout, msgTurnStartTimeout, nil))
	}
	select {
	case s.pump.in <- pumpMsg{ctl: pumpTurn{req}}:
	case <-ctx.Done():
		return TurnResult{SessionID: s.id}, ctx.Err()
	case <-bound.C:
		return timeout()
	case <-s.pump.done:
		return refuse(newError(KindPortExit, s.endedMessage(), nil))
	}
	select {
	case err := <-req.accept:
		if err != nil {
			return refuse(err)
		}
	case <-ctx.Done():
		close(req.abandon)
		return TurnResult{SessionID: s.id}, ctx.Err()
	case <-bound.C:
		close(req.abandon)
		return timeout()
	case <-s.pump.done:
		// Stopped with the request still queued: nobody will take it.
		return refuse(newError(KindPortExit, s.endedMessage(), nil))
	}
	r := <-req.reply
	return r.result, r.err
}

// endedMessage is TU-3's refusal text.
func (s *session) endedMessage() string {
	if s.abandoned.Load() {
		return msgStdoutAbandoned
	}
	return msgStreamEndedNoTurn
}

// requestTurn places the turn start in the stream: the turn starts when the
// connection's mark comes back, after everything the runtime wrote before
// RunTurn asked, so a request or update read after the previous turn's
// answer is handled between turns (EV-11, PM-7, EV-13). When no mark can
// come (the stream ended, or the session is closing) it is refused now.
func (p *pump) requestTurn(req *turnRequest) {
	if !p.closing && !p.streamEnded {
		if p.s.conn.Mark(req) {
			p.pendingTurn = req
			return
		}
		// No mark can come: the stream ended (its end is on its way
		// here) or the connection was closed.
		p.streamEnded = true
	}
	p.startTurn(req)
}

// startTurn is the pump's side of the turn start (TU-3, TU-4, TU-5).
func (p *pump) startTurn(req *turnRequest) {
	var refusal error
	switch {
	case p.closing, p.streamEnded, p.s.abandoned.Load():
		refusal = newError(KindPortExit, p.s.endedMessage(), nil)
	}
	select {
	case req.accept <- refusal:
	case <-req.abandon:
		return // TU-2: the caller gave up first; this turn never starts
	}
	if refusal != nil {
		return
	}
	// TU-2: the start is decided here, after the caller took the
	// acceptance; a caller whose context has ended by now gave up before
	// the turn started, so it gets the context's error and nothing else.
	if err := req.ctx.Err(); err != nil {
		req.reply <- turnReply{result: TurnResult{SessionID: p.sessionID}, err: err}
		return
	}
	t := &turnState{ctx: req.ctx, onEvent: req.onEvent, reply: req.reply}
	p.turn = t
	now := p.s.a.now()
	t.deliver(p.s.event(p.sessionID, normalize.Event{Type: EventSessionStarted, Time: now, Message: msgSessionStarted}))
	if msg, ok := p.caps.Notice(); ok {
		t.deliver(p.s.event(p.sessionID, normalize.Event{Type: EventNotification, Time: now, Message: msg}))
	}
	// EV-11: the turn is told how many events a full queue dropped; they
	// were the oldest, so the notice stands where they would have.
	if n := p.logOverflow(); n > 0 {
		t.deliver(p.s.event(p.sessionID, normalize.Event{Type: EventNotification, Time: now, Message: fmt.Sprintf(msgQueueOverflow, n, maxQueued)}))
	}
	// EV-11 and EV-7: what arrived between turns, then the message that
	// was still accumulating, dated at its last chunk.
	queued := append(p.queue, p.norm.Flush()...)
	p.queue = nil
	for _, e := range queued {
		t.deliver(p.s.event(p.sessionID, e))
	}
	if o := p.latched; o != nil {
		// PM-7: the ending decided between turns ends this one unsent.
		p.latched = nil
		p.endTurn(*o, nil)
		return
	}
	// A session/cancel names no prompt: the one an earlier turn sent
	// must reach the wire ahead of this prompt, or the runtime would take
	// it for this turn's (TU-7, PM-6). The wait is the prompt's own wait
	// for queue space, bounded the same way.
	if queued := p.lastCancel; queued != nil {
		select {
		case <-queued:
			p.lastCancel = nil
		case <-t.ctx.Done():
			p.promptFailed(t.ctx.Err())
			return
		}
	}
	params := &gen.PromptRequest{
		SessionID: gen.SessionID(p.sessionID),
		Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: req.prompt}},
	}
	// Sent from the pump, so the pump knows the call before it handles
	// anything read after it; the wait for queue space is bounded by the
	// caller's context and by Close.
	pc, err := p.s.conn.Go(t.ctx, gen.MethodSessionPrompt, params)
	if err != nil {
		p.promptFailed(err)
		return
	}
	t.call, t.watchCall = pc, true
}

// beginEnd starts an end attempt (TU-7, PM-6): one session/cancel, then a
// read-timeout wait for the runtime's answer to the prompt. The first
// override wins.
func (p *pump) beginEnd(o normalize.Outcome) {
	t := p.turn
	if t == nil || t.ending {
		return
	}
	t.ending, t.override = true, &o
	p.cancelDecisions() // PM-11: a hook still deciding stops waiting
	if t.timer != nil {
		t.timer.Stop()
	}
	t.timer = time.NewTimer(p.s.readTimeout)
	conn, id := p.s.conn, p.sessionID
	// Sent off the pump: a runtime that stopped reading must not stall it.
	p.lastCancel = p.sendOff(func() {
		_ = conn.Notify(p.ctx, gen.MethodSessionCancel, &gen.CancelNotification{SessionID: gen.SessionID(id)})
	})
}

// timerFired: the read-timeout wait of an end attempt or of a failed write
// ran out.
func (p *pump) timerFired() {
	t := p.turn
	switch {
	case t == nil:
	case t.drain != nil:
		p.drainTimedOut() // MS-7
	case t.ending:
		p.endTurn(*t.override, nil) // DI-1: a requested end wins
	case t.writeFailed:
		p.endTurn(normalize.Outcome{Type: EventTurnFailed, Kind: KindPortExit, Message: msgPromptSendFailed}, nil)
	}
}

// promptSettled: the prompt call has its outcome. An answer read from the
// runtime reaches the pump in read order as an InboundResponse, and the stream's
// end as an InboundEnd; only a failed write is taken from here.
func (p *pump) promptSettled() {
	t := p.turn
	t.watchCall = false
	if err := t.call.Result(nil); errors.Is(err, acpsdk.ErrWriteFailed) {
		p.promptFailed(err)
	}
}

// promptFailed: the prompt never reached the runtime (TU-5, TU-9).
func (p *pump) promptFailed(err error) {
	t := p.turn
	switch {
	case t.ending:
		p.endTurn(*t.override, nil) // DI-1: the override holds
	case t.ctx.Err() != nil:
		// The caller gave up while the prompt waited for the writer: it
		// was never sent, so there is nothing to cancel (TU-7's outcome).
		p.endTurn(normalize.Cancelled(), err)
	case errors.Is(err, acpsdk.ErrWriteFailed) && !p.streamEnded:
		t.writeFailed = true
		if t.timer != nil {
			t.timer.Stop()
		}
		t.timer = time.NewTimer(p.s.readTimeout)
	default:
		// No answer can arrive any more: later turns are refused (TU-3)
		// even before the connection reports its end.
		p.streamEnded = true
		p.endTurn(p.lostOutcome(), err)
	}
}

// promptDone applies the prompt's answer, read at this point of the stream
// (DI-1..DI-4).
func (p *pump) promptDone(raw json.RawMessage, err error) {
	t := p.turn
	if t.ending {
		p.endTurn(*t.override, nil) // DI-1: the override holds
		return
	}
	if err != nil {
		if o, cause, ok := promptError(err); ok {
			p.endTurn(o, cause)
			return
		}
		// An error member that is not an error object (DI-4).
		p.endTurn(normalize.Outcome{Type: EventTurnFailed, Kind: KindTurnOutcomeUnknown, Message: msgPromptUndecodable}, err)
		return
	}
	reason, ok := decodeStopReason(raw)
	if !ok {
		p.endTurn(normalize.Outcome{Type: EventTurnFailed, Kind: KindTurnOutcomeUnknown, Message: msgPromptUndecodable}, nil)
		return
	}
	if b, ok := lowerBound(raw); ok {
		t.bound = b
		if b > 0 {
			t.reachedModel = true // MS-12
		}
	}
	t.result = true
	o := normalize.StopReasonAfterRefusal(reason, t.refusedPermission)
	if o.Type == EventTurnInputRequired {
		p.s.log.Warn(logHumanInput) // DI-10 ends as DI-5 does
	}
	p.endTurn(o, nil)
}

// decodeStopReason reads a prompt result's stopReason, which must be a
// string; other members (usage, _meta, vendor keys) are not read here.
func decodeStopReason(raw []byte) (string, bool) {
	return normalize.StringMember(raw, "stopReason")
}

// endTurn ends the open turn, after the measurement source's third check
// when one applies (MS-6, MS-11).
func (p *pump) endTurn(o normalize.Outcome, cause error) {
	if t := p.turn; t != nil && p.consultSource(t, o, cause) {
		return
	}
	p.closeTurn(o, cause)
}

// closeTurn closes the open turn: pending text first, then the terminal
// event, then the reply; no event reaches the caller after it (TU-6, DI-9).
func (p *pump) closeTurn(o normalize.Outcome, cause error) {
	t := p.turn
	if t == nil {
		return
	}
	if t.drain != nil {
		t.drain.cancel()
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	p.cancelDecisions() // PM-11
	for _, e := range p.norm.Flush() {
		t.deliver(p.s.event(p.sessionID, e))
	}
	now := p.s.a.now()
	terminal := p.s.event(p.sessionID, normalize.Event{Type: o.Type, Time: now, Message: o.Message})
	if p.measured {
		terminal = p.usageEvent(o.Type)
		terminal.Time, terminal.Message = now, o.Message
	}
	t.deliver(terminal)
	p.turn = nil
	r := TurnResult{
		SessionID:        p.sessionID,
		Outcome:          o.Type,
		Kind:             o.Kind,
		Message:          o.Message,
		SpendUnaccounted: t.reachedModel && !t.accounted, // MS-12
		UsageMeasured:    p.measured,                     // MS-10
		Model:            p.model,                        // MS-14
		// DI-11: the facts beside the outcome, which DI-1..DI-10 decided.
		PermissionsRefused:  t.refusals,
		UpdatedAfterRefusal: t.updatedAfterRefusal,
	}
	if p.measured {
		r.Usage = p.usage
	}
	var err error
	if o.Type != EventTurnCompleted {
		err = newError(o.Kind, o.Message, cause)
	}
	t.reply <- turnReply{result: r, err: err}
}
