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
	bound   int64
	// started: the drain runs; cancel ends it.
	started bool
	cancel  context.CancelFunc
}

// lowerBound reads MS-5's presence signal from a prompt result:
// max(input,0) + max(output,0) of _meta.quota.token_count; present is
// false when the block is absent (or not an object, or a count is not a
// number). The per-model breakdown is not read. Gemini CLI spells the
// counters input_tokens and output_tokens, as MS-5 does; claude-agent-acp
// and codex-acp write the same block with inputTokens and outputTokens
// (measured, MS-16), so either is read.
func lowerBound(raw []byte) (bound int64, present bool) {
	tc := raw
	for _, name := range []string{"_meta", "quota", "token_count"} {
		var ok bool
		if tc, ok = normalize.Member(tc, name); !ok {
			return 0, false
		}
	}
	if len(tc) == 0 || tc[0] != '{' {
		return 0, false
	}
	input, inOK := tokenCount(tc, "input_tokens", "inputTokens")
	output, outOK := tokenCount(tc, "output_tokens", "outputTokens")
	if !inOK || !outOK {
		return 0, false
	}
	return int64(max(input, 0)) + int64(max(output, 0)), true
}

// tokenCount reads the number member of obj named snake, else the one
// named camel: 0 when neither is there (or null), false when the one read
// is not a number.
func tokenCount(obj []byte, snake, camel string) (float64, bool) {
	for _, name := range []string{snake, camel} {
		raw, ok := normalize.Member(obj, name)
		if !ok || string(raw) == "null" {
			continue
		}
		var n float64
		return n, json.Unmarshal(raw, &n) == nil
	}
	return 0, true
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
	switch {
	case t.result:
		// MS-6, Q-12: a normal end drains only with a positive bound.
		if t.bound <= 0 {
			return false
		}
		bound = t.bound
	case t.reachedModel && abnormalEnd(o):
		// MS-11: once, with bound 0
	default:
		return false
	}
	t.drain = &drainState{outcome: o, cause: cause, bound: bound, cancel: func() {}}
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
	if o.Type != EventTurnFailed {
		return false
	}
	switch o.Kind {
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
		t.deliver(p.usageEvent(EventTokenUsage))
	case m.answered && !p.measured:
		// MS-8: nothing before any figure: the source is dropped and the
		// entry lowered, at Warn since the notice went out (CAP-7). An
		// abnormal end's consultation (MS-11) counts too: only its
		// disposition is beyond what the answer can change.
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
func (p *pump) usageEvent(typ EventType) Event {
	e := p.s.event(p.sessionID, normalize.Event{Type: typ, Time: p.s.a.now()})
	u := p.usage
	e.Usage, e.Model = &u, p.model
	return e
}
