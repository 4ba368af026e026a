package adapter

import (
	"context"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/measure"
	"acpkit.dev/adapter/internal/normalize"
)

// logUsageRecovered is LOG-24's record of a figure, with its source.
const logUsageRecovered = "usage recovered for a turn"

// pumpDrained is a drain's answer for turn; answered is false when
// the drain's context ended before the source concluded.
type pumpDrained struct {
	turn     *turnState
	fig      measure.Figure
	ok       bool
	answered bool
}

// drainState is an open turn held for its source's answer (MS-6).
type drainState struct {
	outcome normalize.Outcome
	cause   error
	// abnormal: an MS-11 consultation, whose answer never drops the source.
	abnormal bool
	bound    int64
	// started: the drain runs; cancel ends it.
	started bool
	cancel  context.CancelFunc
}

// lowerBound reads MS-5's presence signal from a prompt result:
// max(input,0) + max(output,0) of _meta.quota.token_count; present is
// false when the block is absent. The per-model breakdown is not read.
// Gemini CLI spells the counters input_tokens and output_tokens, as MS-5
// does; claude-agent-acp and codex-acp write the same block with
// inputTokens and outputTokens (measured, MS-16), so either is read.
func lowerBound(raw []byte) (bound int64, present bool) {
	var res struct {
		Meta struct {
			Quota struct {
				TokenCount *struct {
					Input       *float64 `json:"input_tokens"`
					Output      *float64 `json:"output_tokens"`
					InputCamel  *float64 `json:"inputTokens"`
					OutputCamel *float64 `json:"outputTokens"`
				} `json:"token_count"`
			} `json:"quota"`
		} `json:"_meta"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Meta.Quota.TokenCount == nil {
		return 0, false
	}
	tc := res.Meta.Quota.TokenCount
	count := func(snake, camel *float64) int64 {
		switch {
		case snake != nil:
			return int64(max(*snake, 0))
		case camel != nil:
			return int64(max(*camel, 0))
		}
		return 0
	}
	return count(tc.Input, tc.InputCamel) + count(tc.Output, tc.OutputCamel), true
}

// consultSource is the third check (MS-6, MS-11): when the turn is to be
// measured it starts the drain, holds the turn open and reports true; the
// turn then ends when the answer or the read timeout comes (drained,
// drainTimedOut).
func (p *pump) consultSource(t *turnState, o normalize.Outcome, cause error) bool {
	if p.source == nil || t.ending || p.closing || t.drain != nil {
		return false
	}
	var bound int64
	abnormal := false
	switch {
	case t.result:
		// MS-6, Q-12: a normal end drains only with a positive bound.
		if t.bound <= 0 {
			return false
		}
		bound = t.bound
	case t.reachedModel && abnormalEnd(o):
		abnormal = true // MS-11: once, with bound 0
	default:
		return false
	}
	t.drain = &drainState{outcome: o, cause: cause, abnormal: abnormal, bound: bound, cancel: func() {}}
	if t.timer != nil {
		t.timer.Stop()
	}
	t.timer = time.NewTimer(p.s.readTimeout)
	if !p.draining {
		p.startDrain(t)
	}
	// Else an earlier turn's cancelled drain is still finishing: a source
	// is asked one drain at a time, so this one starts when it reports.
	return true
}

// startDrain asks the source on its own goroutine; the pump keeps
// answering the runtime meanwhile (MS-6).
func (p *pump) startDrain(t *turnState) {
	d := t.drain
	ctx, cancel := context.WithCancel(p.ctx)
	d.cancel, d.started = cancel, true
	p.draining = true
	src, bound := p.source, d.bound
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		f, ok := src.Drain(ctx, bound)
		p.post(pumpDrained{turn: t, fig: f, ok: ok, answered: ctx.Err() == nil})
	}()
}

// abnormalEnd is MS-11's list: stream end, prompt error response,
// undecodable prompt result, failed send.
func abnormalEnd(o normalize.Outcome) bool {
	if o.Type != normalize.TurnFailed {
		return false
	}
	switch Kind(o.Kind) {
	case KindPortExit, KindResponseError:
		return true
	case KindTurnOutcomeUnknown:
		return o.Message == msgPromptUndecodable
	}
	return false
}

// drained applies a source's answer (MS-8..MS-10); an answer for a turn
// that already ended is discarded (MS-7).
func (p *pump) drained(m pumpDrained) {
	p.draining = false
	t := p.turn
	if t != nil && t.drain != nil && !t.drain.started && p.source != nil {
		p.startDrain(t) // the earlier drain has ended: this turn's starts
		return
	}
	if t == nil || t != m.turn || t.drain == nil {
		return
	}
	d := t.drain
	switch {
	case m.ok:
		p.measured = true
		p.usage = Usage(m.fig.Usage)
		if model := strings.TrimSpace(m.fig.Model); model != "" {
			p.model = model
		}
		t.accounted = m.fig.Grade == measure.GradeAccounted
		p.s.log.Debug(logUsageRecovered, "source", m.fig.Origin)
		// pending text, then token_usage, then the terminal event.
		for _, e := range p.norm.Flush() {
			t.deliver(p.s.event(p.sessionID, e))
		}
		t.deliver(p.usageEvent(normalize.EventType(EventTokenUsage)))
	case m.answered && !d.abnormal && !p.measured:
		// MS-8: nothing before any figure: the source is dropped and the
		// entry lowered, at Warn since the notice went out (CAP-7).
		p.source = nil
		p.lower(normalize.TokenCounts)
	}
	p.closeTurn(d.outcome, d.cause)
}

// drainTimedOut is MS-7: the read timeout ended the wait first; the turn
// ends on its disposition with no figure and the source is kept.
func (p *pump) drainTimedOut() {
	t := p.turn
	d := t.drain
	d.cancel()
	p.closeTurn(d.outcome, d.cause)
}

// usageEvent is an event carrying the session's run-cumulative snapshot
// and model (MS-10, MS-14).
func (p *pump) usageEvent(typ normalize.EventType) Event {
	e := p.s.event(p.sessionID, normalize.Event{Type: typ, Time: p.s.a.now()})
	u := p.usage
	e.Usage, e.Model = &u, p.model
	return e
}
