package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/measure"
	"acpkit.dev/adapter/internal/normalize"
)

// pump is the one goroutine that owns a session's mutable state: the
// normalizer and its message accumulator, the capability record, the open
// turn, the events queued between turns and a latched ending. Everything
// else talks to it through messages, so no lock guards that state. What the
// runtime writes reaches it as one sequence in read order (the connection's
// ordered consumer, session.inbound): updates, requests, the responses to our
// calls, bad lines and the end, so every event is decided knowing what was
// read before it (EV-13) and its events follow the wire.
type pump struct {
	s    *session
	in   chan pumpMsg
	stop chan struct{}
	done chan struct{}
	// ctx ends when the pump stops; goroutines it starts use it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// sends are the answers and session/cancel notifications being
	// queued off the pump, each closed once queued (sendOff), so
	// teardown can wait for those sent before it asked (TD-1). Only the
	// pump reads and writes the list; a WaitGroup would not do, as the
	// pump keeps answering while teardown waits.
	sends []chan struct{}
	// pruneAt is the length of sends at which the queued ones are next
	// dropped from it.
	pruneAt int
	// lastCancel closes once the last session/cancel is queued; the next
	// prompt is queued after it (TU-7, PM-6).
	lastCancel <-chan struct{}

	norm normalize.Normalizer
	// note is the session/update being normalized, decoded in place so
	// that an update costs no allocation of its own.
	note      gen.SessionNotification
	caps      normalize.Capabilities
	sessionID string
	idKnown   bool
	// load is the session/load being confirmed, if any (SR-5, SR-6).
	load *loadWatch
	// stage holds the start facts that the response to its call decides
	// (SS-1); they take effect where that response was read.
	stage *startStage
	// deliveredServers: at least one tool server went out (PM-9).
	deliveredServers bool
	toolGatedNoticed bool
	queue            []normalize.Event
	latched          *normalize.Outcome
	closing          bool
	streamEnded      bool
	turn             *turnState
	// pendingTurn waits for its mark: a turn starts at the point of the
	// stream where RunTurn asked for it (EV-13).
	pendingTurn *turnRequest
	// source is the confirmed measurement source until MS-8 drops it;
	// the usage fields are the session's measured state (MS-10).
	source   measure.Source
	usage    Usage
	measured bool
	model    string
	draining bool

	// dropped counts the events dropped from a full queue since a turn
	// last started (EV-11); the next turn is told.
	dropped int

	// decisions are the permission requests a hook is deciding (PM-11).
	decisions []*pendingDecision
}

// maxQueued bounds the events kept between turns; past it the oldest go,
// counted, so a runtime chattering between turns cannot grow memory
// without bound.
const maxQueued = 4096

// pumpMsg is one message to the pump: an item the connection read (in, or
// note for a notification), stamped with the time it was read, posted by
// session.inbound in read order; or a control from the start, RunTurn,
// teardown or a goroutine of the pump's own (ctl). At most one of in and
// ctl is set; neither means note.
type pumpMsg struct {
	in *acpsdk.Inbound
	// note is a notification's request, copied: the connection reuses a
	// notification's Inbound (acpsdk.OrderedFunc).
	note acpsdk.Request
	at   time.Time
	ctl  pumpControl
}

// pumpControl is a message from the adapter's own side of the session;
// apply runs it on the pump.
type pumpControl interface {
	apply(p *pump)
}

// The controls of the start, RunTurn and teardown; a hook's decision
// (pumpDecided) and a source's answer (pumpDrained) live beside their
// goroutines.
type (
	// pumpSourceOpened tells the pump the session's confirmed measurement
	// source, or that none survived its Open (MS-4).
	pumpSourceOpened struct {
		source measure.Source
	}
	// pumpStage announces start facts before the call whose response
	// decides them is sent (SS-1).
	pumpStage struct{ st *startStage }
	// pumpLoad announces a session/load before it is sent (SR-5), with
	// the facts its confirmation decides.
	pumpLoad struct {
		w  *loadWatch
		st *startStage
	}
	// pumpLoadEnd: SR-6, an unconfirmed load's id stops being the
	// session's own.
	pumpLoadEnd struct{}
	pumpTurn    struct{ req *turnRequest }
	// pumpAnswerOpen is TD-1: answer everything open, then ack.
	pumpAnswerOpen struct{ ack chan struct{} }
)

func (m pumpSourceOpened) apply(p *pump) {
	p.source = m.source
	if m.source == nil {
		p.caps.Lower(normalize.TokenCounts)
	}
}

func (m pumpStage) apply(p *pump)   { p.stage = m.st }
func (m pumpLoad) apply(p *pump)    { p.load, p.stage = m.w, m.st }
func (pumpLoadEnd) apply(p *pump)   { p.load, p.stage = nil, nil }
func (m pumpTurn) apply(p *pump)    { p.requestTurn(m.req) }
func (m pumpDecided) apply(p *pump) { p.decided(m) }
func (m pumpDrained) apply(p *pump) { p.drained(m) }

func (m pumpAnswerOpen) apply(p *pump) {
	p.closing = true
	p.drainRequests()
	p.answerDecisions() // PM-11: TD-1 for the requests a hook was deciding
	// Ack once every answer and session/cancel sent so far is queued, so
	// the flush that follows writes them too; teardown bounds the wait.
	// What is answered later is not waited for.
	sent := slices.Clone(p.sends)
	p.wg.Go(func() {
		for _, done := range sent {
			<-done
		}
		close(m.ack)
	})
}

// replier answers one agent-initiated request: *acpsdk.Reply, or a
// recorder in tests.
type replier interface {
	Answer(result any, err error)
	Skip()
}

// startStage is what the start decided before a session call: the
// capability record and whether tool servers went out, plus the session id
// when the call does not return one (load, resume). The pump adopts them,
// then the id, where the call's confirming response was read.
type startStage struct {
	method           string
	caps             normalize.Capabilities
	deliveredServers bool
	sessionID        string
	// answered: a session/load's success was read; it still needs its
	// replay (SR-5).
	answered bool
}

// loadWatch confirms a session/load: seen closes at the first replayed
// chunk for id announced after the watch (SR-5).
type loadWatch struct {
	id   string
	seen chan struct{}
	hit  bool
}

func newPump(s *session) *pump {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pump{
		s:      s,
		in:     make(chan pumpMsg, 64),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}
	// Until the start publishes its facts, continuation and version are
	// delivered and token counts are a gap (CAP-2, MS-4).
	p.caps.Lower(normalize.TokenCounts)
	return p
}

// send hands the control c to the pump, waiting for room; false when ctx
// ended or the pump is gone.
func (p *pump) send(ctx context.Context, c pumpControl) bool {
	return p.put(ctx, pumpMsg{ctl: c})
}

// put hands m to the pump, waiting for room; false when ctx ended or the
// pump is gone.
func (p *pump) put(ctx context.Context, m pumpMsg) bool {
	// Where there is room, a plain send: under a stream of updates the
	// three-way select below cost more than the pump's work on an update.
	select {
	case <-p.done:
		return false
	default:
	}
	select {
	case p.in <- m:
		return true
	default:
	}
	select {
	case p.in <- m:
		return true
	case <-ctx.Done():
		return false
	case <-p.done:
		return false
	}
}

// post is send without a caller context.
func (p *pump) post(c pumpControl) bool { return p.send(p.ctx, c) }

// run is the pump loop.
func (p *pump) run() {
	defer close(p.done)
	defer p.wg.Wait()
	defer p.cancel()
	for {
		var turnCtx, callDone <-chan struct{}
		var endTimer <-chan time.Time
		if t := p.turn; t != nil {
			if !t.ending {
				turnCtx = t.ctx.Done()
			}
			if t.timer != nil {
				endTimer = t.timer.C
			}
			if t.watchCall {
				callDone = t.call.Done()
			}
		}
		select {
		case m := <-p.in:
			p.handle(m)
			p.handleQueued()
		case <-callDone:
			p.promptSettled()
		case <-turnCtx:
			if p.turn.drain != nil {
				// The runtime already answered: the caller's end stops
				// the wait for the source, not the disposition (MS-7).
				p.drainTimedOut()
				continue
			}
			// TU-7: the caller cancelled; the override holds whatever the
			// response says (DI-1).
			p.beginEnd(normalize.Cancelled())
		case <-endTimer:
			p.turn.timer = nil
			p.timerFired()
		case <-p.stop:
			p.shutdown()
			return
		}
	}
}

// maxBatch bounds the messages handleQueued takes before the pump selects
// again (timers, the caller's end, stop).
const maxBatch = 64

// handleQueued handles the messages already queued, up to maxBatch, before
// the pump selects again: under a stream of updates one select per message
// over five channels cost more than the pump's work on an update. It stops
// at once when the open turn's caller has given up, so TU-7 waits for
// nothing; a timer that fired waits at most the batch.
func (p *pump) handleQueued() {
	for range maxBatch {
		if t := p.turn; t != nil && !t.ending && t.ctx.Err() != nil {
			return
		}
		select {
		case m := <-p.in:
			p.handle(m)
		default:
			return
		}
	}
}

// handle runs one message: a control, or an item the connection read.
func (p *pump) handle(m pumpMsg) {
	if m.ctl != nil {
		m.ctl.apply(p)
		return
	}
	in, at := m.in, m.at
	if in == nil {
		if m.note.Method != gen.MethodSessionUpdate {
			p.s.log.Debug(logUnhandledNotification, "method", m.note.Method) // EV-12
			return
		}
		p.update(&m.note, at)
		return
	}
	switch in.Kind {
	case acpsdk.InboundRequest:
		p.request(in.Request, in.Reply, at)
	case acpsdk.InboundResponse:
		p.response(in)
	case acpsdk.InboundBadLine:
		p.emit(p.norm.Malformed(normalize.MsgUnparsableLine, at)...)
	case acpsdk.InboundOversize:
		p.oversize()
	case acpsdk.InboundEnd:
		p.streamEnd(in.Err)
	case acpsdk.InboundMark:
		if req, ok := in.Mark.(*turnRequest); ok && req == p.pendingTurn {
			p.pendingTurn = nil
			p.startTurn(req)
		}
	}
}

// emit delivers events to the open turn, or queues them for the next one
// (EV-11).
func (p *pump) emit(evs ...normalize.Event) {
	for _, e := range evs {
		if p.turn != nil {
			p.turn.deliver(p.s.event(p.sessionID, e))
			continue
		}
		if len(p.queue) == maxQueued {
			p.queue = p.queue[1:]
			p.dropped++
		}
		p.queue = append(p.queue, e)
	}
}

// update normalizes one session/update read at at (EV-1..EV-10). The
// params are decoded once, by acpsdk, trusting the line the connection
// validated (params it did not read are validated); an update of EV-1's
// set is normalized from that decoding. Everything else (params that do
// not decode, Debug-only and unrecognised variants) is read again by the
// validating path, which tells them apart by the members and tag as sent.
func (p *pump) update(req *acpsdk.Request, at time.Time) {
	n := &p.note
	if req.DecodeParams(n) == nil && normalize.Decodes(n.Update) {
		if sid := string(n.SessionID); p.ours(sid) {
			evs, info := p.norm.Decoded(n.Update, at)
			var callID string
			u, isCallUpdate := n.Update.(*gen.SessionUpdateToolCallUpdate)
			if isCallUpdate {
				callID = string(u.ToolCallID)
			}
			p.updated(sid, evs, info, callID, isCallUpdate)
		}
		*n = gen.SessionNotification{} // keeps nothing of the line
		return
	}
	p.updateRead(req.Params, at)
}

// updateRead normalizes session/update params from their bytes, validating
// them: it reads the session id, the update and its tag by their exact
// names as sent, so it decides every update the trusted decoding does not
// (EV-2, EV-9, EV-10).
func (p *pump) updateRead(params []byte, at time.Time) {
	sid, upd, err := normalize.DecodeNotification(params)
	if err != nil {
		p.emit(p.norm.Malformed(normalize.MsgUnparsableLine, at)...)
		return
	}
	if !p.ours(string(sid)) {
		return
	}
	evs, info := p.norm.Update(upd, at)
	var callID string
	var hasCallID bool
	if info.Variant == gen.SessionUpdateToolCallUpdateTag {
		callID, hasCallID = normalize.StringMember(upd, "toolCallId")
	}
	p.updated(string(sid), evs, info, callID, hasCallID)
}

// ours reports whether an update for session sid is this session's; one
// for another session is logged and ignored.
func (p *pump) ours(sid string) bool {
	// SR-6: while a load is outstanding its id counts as the session's own.
	loading := p.load != nil && sid == p.load.id
	if p.idKnown && sid != p.sessionID && !loading {
		p.s.log.Debug(logForeignUpdate, "session_id", sid)
		return false
	}
	return true
}

// updated does the bookkeeping of one normalized update for session sid
// (callID is a tool_call_update's toolCallId, if it has one) and emits its
// events.
func (p *pump) updated(sid string, evs []normalize.Event, info normalize.Info, callID string, hasCallID bool) {
	p.noteUpdate(info.Variant, callID, hasCallID) // DI-11
	switch {
	case info.FirstUnknown:
		p.s.log.Debug(logUnrecognizedVariant, "session_update", info.Variant)
	case info.DebugOnly:
		p.s.log.Debug(logDebugUpdate, "session_update", info.Variant)
	}
	if w := p.load; w != nil && info.Replay && !info.Invalid && sid == w.id && !w.hit {
		w.hit = true
		close(w.seen)
		if st := p.stage; st != nil && st.method == gen.MethodSessionLoad && st.answered {
			p.adopt(st) // SR-5: replay within the wait after the answer
		}
	}
	if p.turn != nil && info.ReachedModel {
		p.turn.reachedModel = true
	}
	p.emit(evs...)
}

// adopt applies start facts, then the session id (SS-1).
func (p *pump) adopt(st *startStage) {
	p.caps = st.caps
	p.deliveredServers = st.deliveredServers
	p.sessionID, p.idKnown = st.sessionID, true
	p.stage = nil
}

// response handles a response read from the runtime: the open turn's
// prompt answer ends the turn where it was read (EV-13); a session call's
// answer decides the start facts staged for it (SS-1).
func (p *pump) response(in *acpsdk.Inbound) {
	call := in.Call
	if call == nil {
		p.s.log.Debug(logUnmatchedResponse, "id", string(in.ID)) // TU-10
		return
	}
	var raw json.RawMessage
	if t := p.turn; t != nil && t.call != nil && call.ID() == t.call.ID() {
		err := in.Result(&raw)
		p.promptDone(raw, err)
		return
	}
	st := p.stage
	if st == nil || call.Method() != st.method {
		return
	}
	if err := in.Result(&raw); err != nil {
		p.stage = nil // the start falls back or fails; it stages again
		return
	}
	switch st.method {
	case gen.MethodSessionNew:
		id, ok := decodeNewSession(raw)
		if !ok {
			p.stage = nil
			return
		}
		st.sessionID = id
		p.adopt(st)
	case gen.MethodSessionLoad:
		st.answered = true
		if p.load != nil && p.load.hit {
			p.adopt(st) // SR-5: replay before the answer
		}
	default:
		p.adopt(st)
	}
}

// answer sends a request's answer off the pump, so a runtime that stopped
// reading cannot stall it; teardown waits for these (TD-1).
func (p *pump) answer(r replier, result any, err error) {
	p.sendOff(func() { r.Answer(result, err) })
}

// sendOff runs send (a write queued on the connection) on its own
// goroutine and tracks it in p.sends until it returns; the returned
// channel closes then.
func (p *pump) sendOff(send func()) <-chan struct{} {
	if len(p.sends) >= p.pruneAt {
		p.sends = slices.DeleteFunc(p.sends, func(done chan struct{}) bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		})
		p.pruneAt = max(2*len(p.sends), 16)
	}
	done := make(chan struct{})
	p.sends = append(p.sends, done)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(done)
		send()
	}()
	return done
}

// permissionAsk is a permission request being answered: its params, how
// to answer it, and when it was read (or decided, PM-11).
type permissionAsk struct {
	params []byte
	reply  replier
	at     time.Time
}

// request answers an agent-initiated request read at at (PM-1..PM-5, TU-8,
// PM-7).
func (p *pump) request(req *acpsdk.Request, reply replier, at time.Time) {
	if p.closing {
		res, err := teardownAnswer(req.Method)
		p.answer(reply, res, err)
		return
	}
	switch req.Method {
	case gen.MethodSessionRequestPermission:
	case gen.MethodElicitationCreate:
		p.answer(reply, nil, acpsdk.ErrMethodNotFound)
		if p.turn != nil && p.turn.ending {
			return
		}
		p.emit(p.norm.Emit(normalize.Event{Type: EventNotification, Time: at, Message: normalize.MsgElicitation})...)
		p.needPerson(normalize.ElicitationDetail)
		return
	default:
		// PM-4: any other method, fs/* and terminal/* included (TC-4).
		p.answer(reply, nil, acpsdk.ErrMethodNotFound)
		p.emit(p.norm.Malformed(normalize.MsgUnimplementedMethod, at)...)
		return
	}
	if p.turn != nil && p.turn.ending {
		p.answer(reply, permissionCancelled, nil) // TU-8
		return
	}
	ask := permissionAsk{params: req.Params, reply: reply, at: at}
	if p.s.a.permissionHook != nil && p.askHook(ask) {
		return // PM-11: decided off the pump (permission.go)
	}
	p.refusePermission(ask, "", "")
}

// refusePermission refuses a permission request (PM-1, PM-2): with the
// option optID when a hook chose a reject option, else PM-1's choice; the
// notice is PM-1's unless a hook gave its reason.
func (p *pump) refusePermission(m permissionAsk, optID, reason string) {
	ok := optID != ""
	if !ok {
		optID, ok = selectRefusal(m.params)
	}
	p.noteRefusal(m.params) // DI-11
	if ok {
		p.answer(m.reply, permissionSelected(optID), nil)
		if p.turn != nil {
			p.turn.refusedPermission = true // DI-10
		}
		notice := normalize.MsgPermissionRefused
		if reason != "" {
			notice = normalize.Cap(msgPermissionRefusedBy + reason)
		}
		p.emit(p.norm.Emit(normalize.Event{Type: EventNotification, Time: m.at, Message: notice})...)
	} else {
		p.answer(m.reply, permissionCancelled, nil)
		p.emit(p.norm.Emit(normalize.Event{Type: EventNotification, Time: m.at, Message: normalize.MsgPermissionNeeded})...)
	}
	if p.deliveredServers && !p.toolGatedNoticed {
		p.toolGatedNoticed = true
		p.emit(normalize.Event{Type: EventNotification, Time: m.at, Message: normalize.MsgToolGated})
		p.s.log.Warn(logToolGated, "reason", "permission_refused")
	}
	if !ok {
		p.needPerson("")
	}
}

// selectRefusal picks PM-1's refusing option from a permission request's
// params; unreadable params offer none (PM-2).
func selectRefusal(params []byte) (string, bool) {
	opts, ok := permissionOptions(params)
	if !ok {
		return "", false
	}
	kinds := make([]normalize.PermissionOption, len(opts))
	for i, o := range opts {
		kinds[i] = normalize.PermissionOption{OptionID: o.ID, Kind: gen.PermissionOptionKind(o.Kind)}
	}
	return normalize.SelectRefusal(kinds)
}

// needPerson ends the attempt because only a person could answer (PM-6):
// during a turn it begins an end attempt with the human-input override;
// between turns the ending is latched for the next turn (PM-7).
func (p *pump) needPerson(detail string) {
	p.s.log.Warn(logHumanInput)
	o := normalize.InputRequired(detail)
	if p.turn != nil {
		p.beginEnd(o)
		return
	}
	if p.latched == nil {
		p.latched = &o
	}
}

// lower lowers a capability during the session. After the once-per-session
// notice went out this is logged at Warn instead (CAP-7); a measurement
// source dropped mid-session (MS-8) lowers token counts through here.
func (p *pump) lower(c normalize.Capability) {
	if p.caps.Lower(c) {
		p.s.log.Warn(logCapabilityLowered, "capability", c.String())
	}
}

// oversize: DI-7. The line was most likely the answer; waiting would only
// end at the stall timeout, and this is not a lost process.
func (p *pump) oversize() {
	if t := p.turn; t != nil {
		if t.drain != nil {
			return // answered already; the source's wait decides (MS-7)
		}
		if t.ending {
			p.endTurn(*t.override, nil)
			return
		}
		p.endTurn(normalize.Outcome{Type: EventTurnFailed, Kind: KindTurnOutcomeUnknown, Message: msgOversizeLine}, nil)
	}
}

// streamEnd: the connection ended, after everything read before the end was
// handled. Pending text is reported (EV-5); an open turn can get no answer
// any more: it ends as a lost connection (DI-6, DI-8; TU-9 after a failed
// write), or with its override when an end was requested (DI-1).
func (p *pump) streamEnd(cause error) {
	p.streamEnded = true
	if req := p.pendingTurn; req != nil {
		p.pendingTurn = nil
		p.startTurn(req) // refused (TU-3)
	}
	p.emit(p.norm.Flush()...)
	if t := p.turn; t != nil {
		if t.ending {
			p.endTurn(*t.override, nil)
			return
		}
		p.endTurn(p.lostOutcome(), cause)
	}
}

func (p *pump) lostOutcome() normalize.Outcome {
	return normalize.Outcome{Type: EventTurnFailed, Kind: KindPortExit, Message: p.s.lostMessage()}
}

// drainRequests handles, in order, everything already queued to the pump,
// so every request read so far gets its teardown answer (TD-1).
func (p *pump) drainRequests() {
	for {
		select {
		case m := <-p.in:
			p.handle(m)
		default:
			return
		}
	}
}

// shutdown runs when teardown stops the pump (TD-8): requests still queued
// are answered, an open turn ends as a lost connection, and events queued
// for a turn that never started are dropped with a warning (EV-11).
func (p *pump) shutdown() {
	p.closing = true
	p.drainRequests()
	p.answerDecisions()
	if req := p.pendingTurn; req != nil {
		p.pendingTurn = nil
		p.startTurn(req) // refused: the session is closing
	}
	p.emit(p.norm.Flush()...)
	if t := p.turn; t != nil && t.drain != nil {
		p.drainTimedOut() // answered already: the disposition it had
	} else if t != nil {
		p.endTurn(p.lostOutcome(), errors.New("session stopped"))
	}
	p.logOverflow()
	if n := len(p.queue); n > 0 {
		p.s.log.Warn(logDroppingQueued, "count", n)
		p.queue = nil
	}
}

// logOverflow logs the events dropped from a full queue since a turn last
// started and returns how many there were (EV-11).
func (p *pump) logOverflow() int {
	n := p.dropped
	if n > 0 {
		p.dropped = 0
		p.s.log.Warn(logQueueOverflow, "count", n, "bound", maxQueued)
	}
	return n
}

// promptError classifies the error of a session/prompt call (DI-3) and
// returns the cause the turn's error wraps: the wire error, with its data
// in the text when it has any (DI-11), since acpsdk.Error renders only code
// and message and some runtimes put the only cause in data (Qwen Code:
// {"details":"401 …"}). DI-3's message stays exact.
func promptError(err error) (normalize.Outcome, error, bool) {
	if rpcErr, ok := errors.AsType[*acpsdk.Error](err); ok {
		o := normalize.Outcome{
			Type:    EventTurnFailed,
			Kind:    KindResponseError,
			Message: fmt.Sprintf(msgPromptError, rpcErr.Code, normalize.Cap(rpcErr.Message)),
		}
		if data := strings.TrimPrefix(normalize.ErrorText("", rpcErr.Data), ": "); data != "" {
			err = fmt.Errorf("%w: %s", err, data)
		}
		return o, err, true
	}
	return normalize.Outcome{}, err, false
}
