package adapter

import (
	"context"
	"errors"
	"fmt"
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
// else talks to it through messages, so no lock guards that state and the
// order of events is the order the pump saw things in.
type pump struct {
	s    *session
	in   chan any
	stop chan struct{}
	done chan struct{}
	// ctx ends when the pump stops; goroutines it starts use it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// cancels tracks session/cancel sends still queuing, so teardown can
	// flush them with the other answers (TD-1).
	cancels sync.WaitGroup

	norm      normalize.Normalizer
	caps      normalize.Capabilities
	sessionID string
	idKnown   bool
	// load is the session/load being confirmed, if any (SR-5, SR-6).
	load *loadWatch
	// deliveredServers: at least one tool server went out (PM-9).
	deliveredServers bool
	toolGatedNoticed bool
	queue            []normalize.Event
	latched          *normalize.Outcome
	closing          bool
	streamEnded      bool
	turn             *turnState
	turnSeq          uint64
	// source is the confirmed measurement source until MS-8 drops it;
	// the usage fields are the session's measured state (MS-10).
	source   measure.Source
	usage    Usage
	measured bool
	model    string
	draining bool
}

// maxQueued bounds the events kept between turns; past it the oldest go,
// so a runtime chattering between turns cannot grow memory without bound.
const maxQueued = 4096

// Pump messages.
type (
	pumpUpdate struct {
		params []byte
		at     time.Time
	}
	pumpRequest struct {
		method string
		params []byte
		at     time.Time
		answer chan requestAnswer
	}
	requestAnswer struct {
		result any
		err    error
	}
	pumpFault struct {
		kind   faultKind
		method string
	}
	// pumpStarted publishes the start's outcome: facts, then the id (SS-1).
	pumpStarted struct {
		caps             normalize.Capabilities
		deliveredServers bool
		sessionID        string
		source           measure.Source
	}
	pumpLoad struct {
		w *loadWatch
	}
	pumpLoadEnd struct{}
	pumpTurn    struct{ req *turnRequest }
	pumpPrompt  struct {
		seq uint64
		raw json.RawMessage
		err error
	}
	// pumpAnswerOpen is TD-1: answer everything open, then ack.
	pumpAnswerOpen struct{ ack chan struct{} }
)

type faultKind int

const (
	faultOversize faultKind = iota
	faultUnparsable
	faultUnimplemented
)

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
		in:     make(chan any, 64),
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

// send hands m to the pump, waiting for room; false when ctx ended or the
// pump is gone.
func (p *pump) send(ctx context.Context, m any) bool {
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
func (p *pump) post(m any) bool { return p.send(p.ctx, m) }

// run is the pump loop.
func (p *pump) run() {
	defer close(p.done)
	defer p.wg.Wait()
	defer p.cancel()
	connDone := p.s.conn.Done()
	for {
		var turnCtx <-chan struct{}
		var endTimer <-chan time.Time
		if t := p.turn; t != nil {
			if !t.ending {
				turnCtx = t.ctx.Done()
			}
			if t.timer != nil {
				endTimer = t.timer.C
			}
		}
		select {
		case m := <-p.in:
			p.handle(m)
		case <-connDone:
			connDone = nil
			p.streamEnd()
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

func (p *pump) handle(m any) {
	switch m := m.(type) {
	case pumpUpdate:
		p.update(m)
	case pumpRequest:
		p.request(m)
	case pumpFault:
		p.fault(m)
	case pumpStarted:
		p.caps = m.caps
		p.deliveredServers = m.deliveredServers
		p.sessionID, p.idKnown = m.sessionID, true
		p.source = m.source
	case pumpLoad:
		p.load = m.w
	case pumpLoadEnd:
		// SR-6: an unconfirmed load's id stops being the session's own.
		p.load = nil
	case pumpTurn:
		p.startTurn(m.req)
	case pumpPrompt:
		p.promptDone(m)
	case pumpDrained:
		p.drained(m)
	case pumpProbe:
		m(p)
	case pumpAnswerOpen:
		p.closing = true
		p.drainRequests()
		// Ack once every session/cancel is queued, so the flush that
		// follows writes them too; teardown bounds the wait.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.cancels.Wait()
			close(m.ack)
		}()
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
		}
		p.queue = append(p.queue, e)
	}
}

// update normalizes one session/update (EV-1..EV-10).
func (p *pump) update(m pumpUpdate) {
	sid, upd, err := normalize.DecodeNotification(m.params)
	if err != nil {
		p.emit(p.norm.Malformed(normalize.MsgUnparsableLine, m.at)...)
		return
	}
	// SR-6: while a load is outstanding its id counts as the session's own.
	loading := p.load != nil && sid == p.load.id
	if p.idKnown && sid != p.sessionID && !loading {
		p.s.log.Debug(logForeignUpdate, "session_id", sid)
		return
	}
	evs, info := p.norm.Update(upd, m.at)
	switch {
	case info.FirstUnknown:
		p.s.log.Debug(logUnrecognizedVariant, "session_update", info.Variant)
	case info.DebugOnly:
		p.s.log.Debug(logDebugUpdate, "session_update", info.Variant)
	}
	if w := p.load; w != nil && info.Replay && !info.Invalid && sid == w.id && !w.hit {
		w.hit = true
		close(w.seen)
	}
	if p.turn != nil && info.ReachedModel {
		p.turn.reachedModel = true
	}
	p.emit(evs...)
}

// request answers an agent-initiated request (PM-1..PM-3, TU-8, PM-7).
func (p *pump) request(m pumpRequest) {
	if p.closing {
		res, err := teardownAnswer(m.method)
		m.answer <- requestAnswer{res, err}
		return
	}
	if m.method == methodElicitationCreate {
		m.answer <- requestAnswer{err: acpsdk.ErrMethodNotFound}
		if p.turn != nil && p.turn.ending {
			return
		}
		p.emit(p.norm.Emit(normalize.Event{Type: normalize.Notification, Time: m.at, Message: normalize.MsgElicitation})...)
		p.needPerson(normalize.ElicitationDetail)
		return
	}
	// session/request_permission.
	if p.turn != nil && p.turn.ending {
		m.answer <- requestAnswer{result: permissionCancelled} // TU-8
		return
	}
	optID, ok := selectRefusal(m.params)
	if ok {
		m.answer <- requestAnswer{result: permissionResponse{Outcome: permissionOutcome{Outcome: "selected", OptionID: optID}}}
		p.emit(p.norm.Emit(normalize.Event{Type: normalize.Notification, Time: m.at, Message: normalize.MsgPermissionRefused})...)
	} else {
		m.answer <- requestAnswer{result: permissionCancelled}
		p.emit(p.norm.Emit(normalize.Event{Type: normalize.Notification, Time: m.at, Message: normalize.MsgPermissionNeeded})...)
	}
	if p.deliveredServers && !p.toolGatedNoticed {
		p.toolGatedNoticed = true
		p.emit(normalize.Event{Type: normalize.Notification, Time: m.at, Message: normalize.MsgToolGated})
		p.s.log.Warn(logToolGated, "reason", "permission_refused")
	}
	if !ok {
		p.needPerson("")
	}
}

// selectRefusal reads the options of a permission request; unreadable
// params offer no refusing option (PM-2). It reads only each option's id and
// kind: gen.RequestPermissionRequest rejects the whole request for one
// option missing its name or carrying an unknown kind, which would turn a
// PM-1 refusal into a PM-2 cancellation.
func selectRefusal(params []byte) (string, bool) {
	var req struct {
		Options []struct {
			OptionID json.RawMessage `json:"optionId"`
			Kind     json.RawMessage `json:"kind"`
		} `json:"options"`
	}
	if json.Unmarshal(params, &req) != nil {
		return "", false
	}
	opts := make([]normalize.PermissionOption, 0, len(req.Options))
	for _, o := range req.Options {
		var id, kind string
		if json.Unmarshal(o.OptionID, &id) != nil || json.Unmarshal(o.Kind, &kind) != nil {
			continue
		}
		opts = append(opts, normalize.PermissionOption{OptionID: id, Kind: gen.PermissionOptionKind(kind)})
	}
	return normalize.SelectRefusal(opts)
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

// fault handles what the connection's observer reported.
func (p *pump) fault(m pumpFault) {
	now := p.s.a.now()
	switch m.kind {
	case faultUnparsable:
		p.emit(p.norm.Malformed(normalize.MsgUnparsableLine, now)...)
	case faultUnimplemented:
		if m.method == methodElicitationCreate || m.method == methodRequestPermission {
			return // answered -32601 on purpose (PM-3, TD-1), not unknown
		}
		p.emit(p.norm.Malformed(normalize.MsgUnimplementedMethod, now)...)
	case faultOversize:
		// DI-7: the line was most likely the answer; waiting would only
		// end at the stall timeout, and this is not a lost process.
		if t := p.turn; t != nil {
			if t.drain != nil {
				return // answered already; the source's wait decides (MS-7)
			}
			if t.ending {
				p.endTurn(*t.override, nil)
				return
			}
			p.endTurn(normalize.Outcome{Type: normalize.TurnFailed, Kind: string(KindTurnOutcomeUnknown), Message: msgOversizeLine}, nil)
		}
	}
}

// streamEnd: the connection ended. Pending text is reported (EV-5); a turn
// waiting on a failed write now knows the stream's fate (TU-9). A turn's
// prompt call fails on its own, and its outcome arrives as pumpPrompt.
func (p *pump) streamEnd() {
	p.streamEnded = true
	p.emit(p.norm.Flush()...)
	if t := p.turn; t != nil && t.writeFailed {
		p.endTurn(p.lostOutcome(), p.s.conn.Err())
	}
}

func (p *pump) lostOutcome() normalize.Outcome {
	return normalize.Outcome{Type: normalize.TurnFailed, Kind: string(KindPortExit), Message: p.s.lostMessage()}
}

// drainRequests answers every request already queued to the pump (TD-1).
func (p *pump) drainRequests() {
	for {
		select {
		case m := <-p.in:
			if r, ok := m.(pumpRequest); ok {
				res, err := teardownAnswer(r.method)
				r.answer <- requestAnswer{res, err}
				continue
			}
			switch m.(type) {
			case pumpPrompt, pumpTurn, pumpAnswerOpen, pumpProbe:
				p.handle(m)
			}
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
	p.emit(p.norm.Flush()...)
	if t := p.turn; t != nil && t.drain != nil {
		p.drainTimedOut() // answered already: the disposition it had
	} else if t != nil {
		p.endTurn(p.lostOutcome(), errors.New("session stopped"))
	}
	if n := len(p.queue); n > 0 {
		p.s.log.Warn(logDroppingQueued, "count", n)
		p.queue = nil
	}
}

// promptError classifies the error of a session/prompt call.
func promptError(err error) (normalize.Outcome, bool) {
	if rpcErr, ok := errors.AsType[*acpsdk.Error](err); ok {
		return normalize.Outcome{
			Type:    normalize.TurnFailed,
			Kind:    string(KindResponseError),
			Message: fmt.Sprintf(msgPromptError, rpcErr.Code, normalize.Cap(rpcErr.Message)),
		}, true
	}
	return normalize.Outcome{}, false
}

// pumpProbe runs a function on the pump goroutine; tests use it to look at
// pump-owned state without a race.
type pumpProbe func(p *pump)
