package adapter

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/normalize"
)

func TestEV1_VariantsOverTheWire(t *testing.T) {
	h := newHarness(t)
	s := h.start("load")
	_, err, ev := h.turn(s, "thought plan image commands usage mystery tool:t1:read user")
	require.NoError(t, err)
	var got []string
	for _, e := range ev.list() {
		switch e.Type {
		case EventOtherMessage, EventMalformed:
			got = append(got, string(e.Type)+":"+e.Message)
		}
	}
	assert.Equal(t, []string{
		"other_message:reasoning block",
		"other_message:plan update",
		"malformed:agent sent a message chunk this client does not render",
		"malformed:received a session update of an unrecognized kind",
	}, got)
}

func TestEV2_LOG23_UnknownVariantLoggedOnce(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "mystery mystery")
	require.NoError(t, err)
	assert.Len(t, ev.messages(EventMalformed), 2)
	recs := h.log.find("unrecognized session update variant")
	require.Len(t, recs, 1)
	assert.Equal(t, "mystery_update", recs[0].Attrs["session_update"])
}

func TestEV3_EV4_EV5_AccumulationOverTheWire(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "chunk:a:one chunk:a:two chunk:b:three plan long:600")
	require.NoError(t, err)
	var seq []string
	for _, e := range ev.list() {
		if e.Type == EventNotification || e.Type == EventOtherMessage {
			seq = append(seq, string(e.Type)+"="+e.Message)
		}
	}
	long := strings.Repeat("é", 500) + "…"
	assert.Equal(t, []string{
		"notification=this session started with a declared capability gap in: token counts, session continuation",
		"notification=", "notification=",
		"notification=onetwo", // flushed by the new messageId, before its chunk
		"notification=",
		"notification=three", // flushed by the plan, before it
		"other_message=plan update",
		"notification=",
		"notification=" + long, // flushed at turn end, capped
	}, seq)
}

func TestEV6_UpdatesWithoutEventsKeepMessageOpen(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "chunk:a:one usage tool:t:read commands chunk:a:two")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), "onetwo")
}

// tickClock advances one second per reading, so every event has its own
// time.
type tickClock struct{ n atomic.Int64 }

func (c *tickClock) now() time.Time {
	return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(c.n.Add(1)) * time.Second)
}

func TestEV7_EV11_BetweenTurnMessageDatedAtLastChunk(t *testing.T) {
	clk := &tickClock{}
	h := newHarness(t, withClock(clk.now, sleepCtx))
	// Sent before session/new answers, so they are queued before the start
	// returns (SDK-7 ordering), then delivered by the first turn.
	s := h.start("beforenew=chunk:r:replayed,plan")
	_, err, ev := h.turn(s, "")
	require.NoError(t, err)
	evs := ev.list()
	require.GreaterOrEqual(t, len(evs), 5)
	assert.Equal(t, EventSessionStarted, evs[0].Type)
	assert.True(t, strings.HasPrefix(evs[1].Message, "this session started"), "the notice comes before queued events")
	var msg Event
	for _, e := range evs {
		if e.Message == "replayed" {
			msg = e
		}
	}
	require.Equal(t, "replayed", msg.Message)
	assert.True(t, msg.Time.Before(evs[0].Time), "dated at its chunk, not at the turn start")
	assert.Contains(t, ev.messages(EventOtherMessage), "plan update")
}

func TestEV8_LastMessageIsLatestCompleted(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, _, ev := h.turn(s, "chunk:a:first chunk:b:second")
	texts := ev.texts()
	assert.Equal(t, "second", texts[len(texts)-1], "the last completed message")
}

func TestEV9_LOG24_ForeignSessionDropped(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "foreign chunk:a:mine")
	require.NoError(t, err)
	assert.NotContains(t, ev.texts(), "not yours")
	assert.Contains(t, ev.texts(), "mine")
	recs := h.log.find("dropping session/update for a foreign session")
	require.Len(t, recs, 1)
	assert.Equal(t, "DEBUG", recs[0].Level.String())
}

func TestEV9_BeforeIDKnownEverythingIsOwn(t *testing.T) {
	h := newHarness(t)
	s := h.start("beforenew=foreign")
	_, err, ev := h.turn(s, "")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), "not yours", "sent before session/new answered")
}

func TestEV10_GarbageAndBadParamsAreMalformed(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "garbage badupdate chunk:a:still-fine")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"received a line that could not be parsed as JSON-RPC",
		"received a line that could not be parsed as JSON-RPC",
	}, ev.messages(EventMalformed))
	assert.Contains(t, ev.texts(), "still-fine")
}

func TestEV11_LOG22_QueuedEventsDroppedAtTeardown(t *testing.T) {
	h := newHarness(t)
	// Sent before session/new answers, so queued before the start returns.
	s := h.start("beforenew=plan,thought")
	require.Equal(t, 2, queued(s))
	h.stop(s)
	recs := h.log.find("dropping events queued for a turn that never started")
	require.Len(t, recs, 1)
	assert.Equal(t, "2", recs[0].Attrs["count"])
}

// queued asks the pump how many events it holds for the next turn.
func queued(s Session) int {
	ch := make(chan int, 1)
	s.s.pump.post(pumpProbe(func(p *pump) { ch <- len(p.queue) }))
	return <-ch
}

func TestEV12_LOG24_NullIDAndUnknownNotifications(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "nullid vendornote")
	require.NoError(t, err)
	assert.Contains(t, ev.messages(EventOtherMessage), "plan update", "a null id is a notification")
	recs := h.log.find("unhandled notification")
	require.Len(t, recs, 1)
	assert.Equal(t, "_vendor/note", recs[0].Attrs["method"])
}

func TestTC1_TC2_TC3_ToolResultOverTheWire(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "tool:t1:execute tool:t2:bogus tooldone:t1:completed:Ran tooldone:t2:failed tooldone:t9:completed")
	require.NoError(t, err)
	var results []Event
	for _, e := range ev.list() {
		if e.Type == EventToolResult {
			results = append(results, e)
		}
	}
	require.Len(t, results, 2)
	assert.Equal(t, "execute", results[0].ToolName)
	assert.Equal(t, "Ran", results[0].Message)
	assert.False(t, results[0].ToolError)
	assert.GreaterOrEqual(t, results[0].ToolDurationMS, int64(0))
	assert.Equal(t, "other", results[1].ToolName)
	assert.True(t, results[1].ToolError)
}

func TestTC4_PM4_NoFsOrTerminalServed(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "unknownreq stop:end_turn")
	require.NoError(t, err, "the turn continues")
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Contains(t, ev.messages(EventMalformed), "the agent called a method this client does not implement")
	answer := ev.lastText("answer=")
	assert.Contains(t, answer, `"code":-32601`)
	assert.Contains(t, answer, `"message":"method not found"`)
}

func TestPM1_RefusingOptionSelected(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "perm:allow_once+reject_always+reject_once stop:end_turn")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"selected","optionId":"opt-2-reject_once"}}`)
	assert.Contains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
	_, _, ev = h.turn(s, "perm:allow_always+reject_always stop:end_turn")
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"selected","optionId":"opt-1-reject_always"}}`)
}

func TestPM2_NoRefusingOptionEndsAttempt(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "perm:allow_once+allow_always stop:end_turn")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
	assert.Equal(t, "agent asked for a decision only a person can make", r.Message)
	assert.Contains(t, ev.texts(), `answer={"outcome":{"outcome":"cancelled"}}`)
	assert.Contains(t, ev.texts(), "the agent needs a permission this unattended run cannot grant")
}

func TestPM3_ElicitationEndsAttempt(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	r, err, ev := h.turn(s, "elicit stop:end_turn")
	assert.ErrorIs(t, err, &Error{Kind: KindTurnInputRequired, Message: "agent asked for a decision only a person can make: an answer to a question"})
	assert.Equal(t, EventTurnInputRequired, r.Outcome)
	assert.Contains(t, ev.texts(), "the agent asked for something only a person could give, and this unattended run has no one to give it: an answer to a question")
	assert.Empty(t, ev.messages(EventMalformed), "answered on purpose, not an unknown method")
	answer := ev.lastText("answer=")
	assert.Contains(t, answer, `"code":-32601`)
	assert.Contains(t, answer, `"message":"method not found"`)
}

func TestPM5_RequestWithoutIDNotAnswered(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, _ := h.turn(s, "permnoid stop:end_turn")
	require.NoError(t, err)
	_, err, _ = h.turn(s, "stop:end_turn")
	require.NoError(t, err)
	h.stop(s)
	for _, l := range h.wire() {
		assert.NotContains(t, l, `"outcome"`)
	}
}

func TestPM7_BetweenTurnEndingLatched(t *testing.T) {
	h := newHarness(t)
	// Asked before session/new answers: decided before any turn.
	s := h.start("beforenew=perm:allow_once")
	r, err, ev := h.turn(s, "stop:end_turn")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
	assert.Equal(t, EventTurnInputRequired, r.Outcome)
	types := ev.types()
	assert.Equal(t, EventSessionStarted, types[0])
	assert.Contains(t, ev.texts(), "the agent needs a permission this unattended run cannot grant")
	assert.Equal(t, EventTurnInputRequired, types[len(types)-1])
	assert.Zero(t, count(h.wire(), `"session/prompt"`), "no prompt sent")
	// The latch is spent: the next turn runs normally.
	_, err, _ = h.turn(s, "stop:end_turn")
	assert.NoError(t, err)
}

func TestPM8_InputRequiredNotRetried(t *testing.T) {
	assert.Equal(t, RetryNever, KindTurnInputRequired.Retry())
}

func TestPM9_LOG7_ToolGatedNoticeOnce(t *testing.T) {
	h := newHarness(t)
	cfg := filepath.Join(h.dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers":{"sortie-tools":{"command":"/bin/true","args":["x"]}}}`), 0o600))
	p := h.params()
	p.MCPConfigPath = cfg
	s := h.startWith(p)
	const gated = "this session delivered tool servers and the agent runtime asked for consent before running a tool; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it"
	_, err, ev := h.turn(s, "perm:reject_once perm:reject_once stop:end_turn")
	require.NoError(t, err)
	n := 0
	for _, m := range ev.texts() {
		if m == gated {
			n++
		}
	}
	assert.Equal(t, 1, n)
	recs := h.log.find("a tool call was gated by consent in a session that delivered tool servers")
	require.Len(t, recs, 1)
	assert.Equal(t, "permission_refused", recs[0].Attrs["reason"])
	assert.JSONEq(t, `{"cwd":"`+h.dir+`","mcpServers":[{"name":"sortie-tools","command":"/bin/true","args":["x"],"env":[]}]}`, params(t, h.line("session/new")))
}

func TestPM9_NoNoticeWithoutServers(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, _, _ = h.turn(s, "perm:reject_once stop:end_turn")
	assert.Empty(t, h.log.find("a tool call was gated by consent in a session that delivered tool servers"))
}

func TestPM10_RequestIDEchoed(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	_, err, ev := h.turn(s, "permstrid stop:end_turn")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), `id="req-7"`)
}

func TestCAP2_CAP3_CAP6_NoticeListsGapsInOrder(t *testing.T) {
	h := newHarness(t)
	s := h.start("noinfo")
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation, agent version", h.notice(s))
}

func TestCAP4_MCP9_LOG6_HTTPServerWithheld(t *testing.T) {
	h := newHarness(t)
	cfg := filepath.Join(h.dir, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers":{"web":{"url":"https://example.invalid/mcp"},"local":{"command":"/bin/true"}}}`), 0o600))
	p := h.params("load")
	p.MCPConfigPath = cfg
	s := h.startWith(p)
	assert.Equal(t, "this session started with a declared capability gap in: tool servers, token counts", h.notice(s))
	assert.Len(t, h.log.find("configured tool servers were not delivered: the agent does not advertise HTTP tool-server support"), 1)
	assert.JSONEq(t, `{"cwd":"`+h.dir+`","mcpServers":[{"name":"local","command":"/bin/true","args":[],"env":[]}]}`, params(t, h.line("session/new")))

	h2 := newHarness(t)
	p2 := h2.params("load", "http")
	p2.MCPConfigPath = cfg
	s2 := h2.startWith(p2)
	assert.Equal(t, "this session started with a declared capability gap in: token counts", h2.notice(s2))
	assert.Contains(t, params(t, h2.line("session/new")), `"type":"http"`)
}

func TestCAP5_ContinuationLoweredWithoutRoute(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", h.notice(s))
}

func TestCAP1_CAP7_RecordOnlyLowers(t *testing.T) {
	// The record itself is tested in internal/normalize; here: the pump
	// keeps the record it was given and a second turn repeats no notice.
	h := newHarness(t)
	s := h.start("load")
	assert.NotEmpty(t, h.notice(s))
	assert.Empty(t, h.notice(s))
}

func TestCAP7_LOG8_LoweringAfterNoticeWarns(t *testing.T) {
	h := newHarness(t)
	s := h.start("load")
	lower := func(c normalize.Capability) {
		done := make(chan struct{})
		s.s.pump.post(pumpProbe(func(p *pump) { p.lower(c); close(done) }))
		<-done
	}
	lower(normalize.ToolServers) // before the notice: part of it, no warning
	assert.Empty(t, h.log.find("capability lowered after the once-per-session notice"))
	assert.Equal(t, "this session started with a declared capability gap in: tool servers, token counts", h.notice(s))
	lower(normalize.AgentVersion)
	lower(normalize.AgentVersion) // already lowered: nothing more
	recs := h.log.find("capability lowered after the once-per-session notice")
	require.Len(t, recs, 1)
	assert.Equal(t, "agent version", recs[0].Attrs["capability"])
	assert.Empty(t, h.notice(s), "no second notice")
}
