package adapter

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/measure"
	"acpkit.dev/adapter/internal/measure/claude"
	"acpkit.dev/adapter/internal/measure/codex"
	"acpkit.dev/adapter/internal/measure/gemini"
)

// withSources replaces the adapter's measurement registry.
func withSources(r *measure.Registry) Option { return func(o *options) { o.sources = r } }

// scriptedSource is a measurement source for the pump's side of §7: it
// claims launches carrying the "measured" argument, recognises the fake
// agent, and answers each Drain with the next scripted answer. The source
// reading a real runtime is tested in internal/measure/gemini and end to
// end in gemini_e2e_test.go.
type scriptedSource struct {
	answers chan scriptedAnswer

	mu      sync.Mutex
	claimed bool
	opened  string
	openErr error // Open's answer
	closed  int
	bounds  []int64
}

type scriptedAnswer struct {
	fig measure.Figure
	ok  bool
	// block: never answer; wait for the drain's context (MS-7).
	block bool
}

func newScripted() *scriptedSource { return &scriptedSource{answers: make(chan scriptedAnswer, 8)} }

func (s *scriptedSource) Name() string { return "scripted" }
func (s *scriptedSource) Claim(l measure.Launch) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range l.Args {
		if a == "measured" {
			s.claimed = true
		}
	}
	return s.claimed, nil
}
func (s *scriptedSource) Recognize(n string) bool { return n == "fakeagent" }
func (s *scriptedSource) Env() []string           { return nil }
func (s *scriptedSource) Open(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened = id
	return s.openErr
}
func (s *scriptedSource) Drain(ctx context.Context, bound int64) (measure.Figure, bool) {
	s.mu.Lock()
	s.bounds = append(s.bounds, bound)
	s.mu.Unlock()
	select {
	case a := <-s.answers:
		if a.block {
			<-ctx.Done()
			return measure.Figure{}, false
		}
		return a.fig, a.ok
	case <-ctx.Done():
		return measure.Figure{}, false
	}
}
func (s *scriptedSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
	return nil
}
func (s *scriptedSource) drains() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.bounds...)
}

func scriptedHarness(t *testing.T) (*harness, *scriptedSource) {
	t.Helper()
	src := newScripted()
	var r measure.Registry
	require.NoError(t, r.Register("scripted", func() measure.Source { return src }))
	return newHarness(t, withSources(&r)), src
}

func figure(in, out, cache int64, model string, g measure.Grade) scriptedAnswer {
	return scriptedAnswer{ok: true, fig: measure.Figure{
		Usage: measure.Usage{Input: in, Output: out, Total: in + out, CacheRead: cache}, Model: model, Origin: "telemetry", Grade: g}}
}

func TestMS10_FigureEmitsTokenUsageBeforeTheTerminalEvent(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	src.answers <- figure(150, 20, 5, "  gemini-x  ", measure.GradeAccounted)
	r, err, ev := h.turn(s, "chunk::hi quota:100/10")
	require.NoError(t, err)
	assert.Equal(t, []int64{110}, src.drains(), "MS-6: asked with the turn's bound")
	types := ev.types()
	require.GreaterOrEqual(t, len(types), 2)
	assert.Equal(t, []EventType{EventTokenUsage, EventTurnCompleted}, types[len(types)-2:])
	tu := ev.list()[len(types)-2]
	want := Usage{Input: 150, Output: 20, Total: 170, CacheRead: 5}
	require.NotNil(t, tu.Usage)
	assert.Equal(t, want, *tu.Usage)
	assert.Equal(t, "gemini-x", tu.Model, "MS-10: whitespace-trimmed")
	assert.Equal(t, want, r.Usage)
	assert.True(t, r.UsageMeasured)
	assert.Equal(t, "gemini-x", r.Model, "MS-14")
	assert.False(t, r.SpendUnaccounted, "an accounted figure covers the turn")
	assert.Len(t, h.log.find(logUsageRecovered), 1, "LOG-24")
	assert.Equal(t, "telemetry", h.log.find(logUsageRecovered)[0].Attrs["source"])

	// MS-10: run-cumulative, and the flag latches.
	src.answers <- figure(300, 40, 10, "gemini-x", measure.GradePartial)
	r, err, ev = h.turn(s, "quota:100/10")
	require.NoError(t, err)
	assert.Equal(t, Usage{Input: 300, Output: 40, Total: 340, CacheRead: 10}, r.Usage)
	assert.True(t, r.SpendUnaccounted, "MS-12: a partial figure does not account for the turn")
	assert.Len(t, ev.messages(EventTokenUsage), 1)
}

func TestCAP2_ConfirmedSourceDeliversTokenCounts(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	_, _, ev := h.turn(s, "stop:end_turn")
	assert.Equal(t, "this session started with a declared capability gap in: session continuation", ev.texts()[0],
		"RS-11: token counts are delivered when a source is confirmed")
	src.mu.Lock()
	assert.Equal(t, "sess-1", src.opened, "Open is told the session id")
	src.mu.Unlock()
	h.stop(s)
	src.mu.Lock()
	assert.Equal(t, 1, src.closed, "TD-11: the confirmed source is closed at session end")
	src.mu.Unlock()
}

func TestQ12_MS6_NoDrainWithoutAPositivePresenceSignal(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	for _, p := range []string{"chunk::hi stop:end_turn", "chunk::hi quota:0/0"} {
		r, err, ev := h.turn(s, p)
		require.NoError(t, err)
		assert.Empty(t, ev.messages(EventTokenUsage))
		assert.False(t, r.UsageMeasured)
	}
	assert.Empty(t, src.drains(), "Q-12: no quota block or a zero one asks nothing")
	assert.Empty(t, h.log.find(logCapabilityLowered), "and the source is kept")
}

func TestMS7_ReadTimeoutEndsTheWaitAndKeepsTheSource(t *testing.T) {
	h, src := scriptedHarness(t)
	h.readTimeoutMS = 300
	s := h.start("measured")
	src.answers <- scriptedAnswer{block: true}
	r, err, ev := h.turn(s, "quota:100/10")
	require.NoError(t, err, "the turn ends on the disposition it had")
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Empty(t, ev.messages(EventTokenUsage))
	assert.False(t, r.UsageMeasured)
	assert.True(t, r.SpendUnaccounted)
	assert.Empty(t, h.log.find(logCapabilityLowered), "the source was never asked and answered")

	src.answers <- figure(10, 1, 0, "m", measure.GradeAccounted)
	r, err, _ = h.turn(s, "quota:5/5")
	require.NoError(t, err)
	assert.True(t, r.UsageMeasured, "kept: the next turn is measured")
}

func TestMS8_NothingBeforeAnyFigureDropsTheSource(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	src.answers <- scriptedAnswer{}
	r, err, ev := h.turn(s, "quota:100/10")
	require.NoError(t, err)
	assert.Empty(t, ev.messages(EventTokenUsage))
	assert.False(t, r.UsageMeasured)
	recs := h.log.find(logCapabilityLowered)
	require.Len(t, recs, 1, "CAP-7: lowered after the notice, at Warn")
	assert.Equal(t, "WARN", recs[0].Level.String())
	assert.Equal(t, "token counts", recs[0].Attrs["capability"])

	_, err, _ = h.turn(s, "quota:100/10")
	require.NoError(t, err)
	assert.Len(t, src.drains(), 1, "dropped for the rest of the session")
}

func TestMS9_AfterAFigureNothingCostsOnlyThatTurn(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	src.answers <- figure(10, 1, 0, "m", measure.GradeAccounted)
	_, err, _ := h.turn(s, "quota:5/5")
	require.NoError(t, err)
	src.answers <- scriptedAnswer{}
	r, err, ev := h.turn(s, "quota:5/5")
	require.NoError(t, err)
	assert.Empty(t, ev.messages(EventTokenUsage), "this turn has no figure of its own")
	assert.True(t, r.UsageMeasured, "MS-10: the flag stays latched")
	assert.True(t, r.SpendUnaccounted)
	assert.Equal(t, Usage{Input: 10, Output: 1, Total: 11}, r.Usage, "the snapshot is the session's")
	assert.Empty(t, h.log.find(logCapabilityLowered))
	src.answers <- figure(20, 2, 0, "m", measure.GradeAccounted)
	r, _, _ = h.turn(s, "quota:5/5")
	assert.Equal(t, int64(20), r.Usage.Input, "the source stayed")
}

func TestMS11_MS12_AbnormalEndAfterReachingAModelConsultsOnce(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	src.answers <- figure(40, 4, 0, "m", measure.GradeUnknown)
	r, err, ev := h.turn(s, "chunk::partial err:-32603")
	require.Error(t, err)
	assert.Equal(t, []int64{0}, src.drains(), "MS-11: bound 0")
	assert.Equal(t, EventTurnFailed, r.Outcome, "the disposition is unchanged")
	assert.Equal(t, KindResponseError, r.Kind)
	assert.Len(t, ev.messages(EventTokenUsage), 1)
	assert.True(t, r.SpendUnaccounted, "MS-12: an unknown grade does not account for the turn")

	// No evidence of a model: not consulted.
	_, err, _ = h.turn(s, "err:-32603")
	require.Error(t, err)
	assert.Len(t, src.drains(), 1)
	// MS-12: a replayed user chunk is no evidence either.
	_, _, _ = h.turn(s, "user err:-32603")
	assert.Len(t, src.drains(), 1)
}

func TestMS4_MS14_UnmeasuredSessionReportsNoFigureAndNoModel(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start() // not claimed
	r, err, ev := h.turn(s, "chunk::hi quota:100/10")
	require.NoError(t, err)
	assert.Empty(t, src.drains())
	assert.Empty(t, ev.messages(EventTokenUsage))
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", ev.texts()[0])
	assert.False(t, r.UsageMeasured)
	assert.Empty(t, r.Model)
	assert.True(t, r.SpendUnaccounted)
}

// A confirmed source whose Open fails measures nothing: it is closed, never
// drained, and token counts are in the session's gap notice.
func TestMS4_SourceThatCannotOpenLeavesTheSessionUnmeasured(t *testing.T) {
	h, src := scriptedHarness(t)
	src.openErr = errors.New("no telemetry file")
	s := h.start("measured")
	r, err, ev := h.turn(s, "chunk::hi quota:100/10")
	require.NoError(t, err)
	assert.Empty(t, src.drains())
	assert.Empty(t, ev.messages(EventTokenUsage))
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", ev.texts()[0])
	assert.False(t, r.UsageMeasured)
	src.mu.Lock()
	assert.Equal(t, 1, src.closed, "closed once, when Open failed")
	src.mu.Unlock()
}

func TestMS13_UsageUpdateGivesNoFigure(t *testing.T) {
	h, src := scriptedHarness(t)
	s := h.start("measured")
	r, err, ev := h.turn(s, "usage stop:end_turn")
	require.NoError(t, err)
	assert.Empty(t, src.drains())
	assert.Empty(t, ev.messages(EventTokenUsage))
	assert.False(t, r.UsageMeasured)
	assert.NotEmpty(t, h.log.find(logDebugUpdate), "logged at Debug")
}

func TestMS5_LowerBoundReadsTheVendorBlock(t *testing.T) {
	for raw, want := range map[string]int64{
		`{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":303,"output_tokens":30},"model_usage":[{"model":"x","token_count":{"input_tokens":1,"output_tokens":1}}]}}}`: 333,
		`{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":-5,"output_tokens":7}}}}`:                                                                                    7,
		`{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":0,"output_tokens":0}}}}`:                                                                                     0,
		// claude-agent-acp 0.101.0 and codex-acp 2.6.0, as they answered
		// against the fake APIs (MS-16).
		`{"stopReason":"end_turn","usage":{"inputTokens":210,"outputTokens":41,"cachedReadTokens":81,"cachedWriteTokens":17,"totalTokens":349},"_meta":{"quota":{"token_count":{"totalTokens":349,"inputTokens":210,"cachedInputTokens":81,"cachedWriteTokens":17,"outputTokens":41,"reasoningOutputTokens":0},"model_usage":[{"model":"claude-opus-5-5","token_count":{"totalTokens":692,"inputTokens":517,"cachedInputTokens":84,"cachedWriteTokens":17,"outputTokens":74,"reasoningOutputTokens":0}}]}}}`:                251,
		`{"stopReason":"end_turn","usage":{"totalTokens":150,"inputTokens":70,"cachedReadTokens":30,"cachedWriteTokens":0,"outputTokens":50,"thoughtTokens":20},"_meta":{"quota":{"token_count":{"totalTokens":150,"inputTokens":70,"cachedInputTokens":30,"cacheWriteInputTokens":0,"outputTokens":50,"reasoningOutputTokens":20},"model_usage":[{"model":"gpt-5.5","token_count":{"totalTokens":150,"inputTokens":70,"cachedInputTokens":30,"cacheWriteInputTokens":0,"outputTokens":50,"reasoningOutputTokens":20}}]}}}`: 120,
		`{"_meta":{"quota":{"token_count":{"input_tokens":5,"inputTokens":500,"outputTokens":7}}}}`: 12,
	} {
		b, ok := lowerBound([]byte(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, want, b, raw)
	}
	for _, raw := range []string{`{"stopReason":"end_turn"}`, `{"stopReason":"end_turn","_meta":"x"}`, `{"stopReason":"end_turn","_meta":{"quota":{}}}`} {
		_, ok := lowerBound([]byte(raw))
		assert.False(t, ok, raw)
	}
}

func TestMS1_MS16_SourcesShipForGeminiClaudeAndCodexInClaimOrder(t *testing.T) {
	assert.Equal(t, []string{gemini.Name, claude.Name, codex.Name}, defaultSources().Names())
}

func FuzzMS5_LowerBound(f *testing.F) {
	f.Add([]byte(`{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":303,"output_tokens":30}}}}`))
	f.Add([]byte(`{"_meta":{"quota":{"token_count":{"input_tokens":1e300,"output_tokens":-1e300}}}}`))
	f.Add([]byte(`{"_meta":{"quota":{"token_count":null}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, ok := lowerBound(raw)
		if !ok && b != 0 {
			t.Fatalf("absent block with bound %d", b)
		}
	})
}

func TestMS7_LateDrainDoesNotCostTheNextTurnItsFigure(t *testing.T) {
	h, src := scriptedHarness(t)
	h.readTimeoutMS = 200
	s := h.start("measured")
	for range 5 {
		src.answers <- scriptedAnswer{block: true}
		r, err, _ := h.turn(s, "quota:100/10")
		require.NoError(t, err)
		assert.False(t, r.UsageMeasured)
	}
	// Whatever the timing of the last cancelled drain, the next turn's
	// drain runs after it and is answered. (A turn whose drain never got
	// to start leaves its scripted answer behind.)
	for len(src.answers) > 0 {
		<-src.answers
	}
	src.answers <- figure(10, 1, 0, "m", measure.GradeAccounted)
	r, err, _ := h.turn(s, "quota:5/5")
	require.NoError(t, err)
	assert.True(t, r.UsageMeasured)
}
