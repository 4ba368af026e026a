package adapter

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// methods lists the methods of the requests the agent read, in order.
func (h *harness) methods() []string {
	var out []string
	for _, l := range h.wire() {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// line returns the first wire line for method.
func (h *harness) line(method string) string {
	for _, l := range h.wire() {
		if strings.Contains(l, `"method":"`+method+`"`) {
			return l
		}
	}
	h.t.Fatalf("no %s on the wire", method)
	return ""
}

func params(t *testing.T, line string) string {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &m))
	return string(m.Params)
}

func (h *harness) resume(id string, args ...string) StartParams {
	p := h.params(args...)
	p.ResumeSessionID = id
	return p
}

func (h *harness) notice(s Session) string {
	h.t.Helper()
	_, err, ev := h.turn(s, "")
	require.NoError(h.t, err)
	for _, m := range ev.texts() {
		if strings.HasPrefix(m, "this session started") {
			return m
		}
	}
	return ""
}

func TestSR1_NewSessionWithoutSavedID(t *testing.T) {
	h := newHarness(t)
	h.start("load", "resume")
	assert.Equal(t, []string{"initialize", "session/new"}, h.methods())
	assert.JSONEq(t, `{"cwd":"`+h.dir+`","mcpServers":[]}`, params(t, h.line("session/new")))
}

func TestSR1_NoContinuationAdvertised(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1"))
	assert.Equal(t, []string{"initialize", "session/new"}, h.methods(), "no probe, no continuation")
	assert.Equal(t, "sess-1", s.ID)
}

func TestSR2_LoadPreferredOverResume(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1", "load", "resume", "loadreplay"))
	assert.Equal(t, []string{"initialize", "_sortie.dev/probe/unimplemented", "session/load"}, h.methods())
	assert.Equal(t, "old-1", s.ID)
}

func TestSR2_ResumeWhenOnlyResume(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1", "resume"))
	assert.Equal(t, []string{"initialize", "_sortie.dev/probe/unimplemented", "session/resume"}, h.methods())
	assert.Equal(t, "old-1", s.ID)
}

func TestSR3_LOG10_NegativeControlParamsAndTimeout(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.startWith(h.resume("old-1", "load", "hang-control"))
	assert.JSONEq(t, `{}`, params(t, h.line("_sortie.dev/probe/unimplemented")))
	assert.Equal(t, "sess-1", s.ID, "fell back to session/new")
	recs := h.log.find("continuation negative control timed out")
	require.Len(t, recs, 1)
	assert.Equal(t, "session/load", recs[0].Attrs["method"])
	assert.NotContains(t, h.methods(), "session/load")
}

func TestSR4_ResumeParamsAndConfirmation(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1", "resume"))
	assert.JSONEq(t, `{"sessionId":"old-1","cwd":"`+h.dir+`"}`, params(t, h.line("session/resume")))
	assert.Equal(t, "old-1", s.ID)
	assert.Equal(t, "this session started with a declared capability gap in: token counts", h.notice(s))
}

func TestSR5_LoadConfirmedByReplay(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1", "load", "loadreplay"))
	assert.JSONEq(t, `{"sessionId":"old-1","cwd":"`+h.dir+`","mcpServers":[]}`, params(t, h.line("session/load")))
	assert.Equal(t, "old-1", s.ID)
	_, err, ev := h.turn(s, "")
	require.NoError(t, err)
	// The replayed reply is delivered in the first turn (EV-11).
	assert.Contains(t, ev.texts(), "earlier answer")
}

func TestSR5_LoadWithoutReplayFallsBack(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.startWith(h.resume("old-1", "load", "sid=fresh-2"))
	assert.Equal(t, "fresh-2", s.ID)
	assert.Equal(t, []string{"initialize", "_sortie.dev/probe/unimplemented", "session/load", "session/new"}, h.methods())
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", h.notice(s))
}

func TestSR5_ReplayForAnotherIDDoesNotConfirm(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.startWith(h.resume("old-1", "load", "loadreplayother", "sid=fresh-2"))
	assert.Equal(t, "fresh-2", s.ID)
}

func TestSR6_UnconfirmedLoadIDNotKeptAsOwn(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.startWith(h.resume("old-1", "load", "sid=fresh-2"))
	// The fresh session's updates are its own; the loaded id's are foreign now.
	_, err, ev := h.turn(s, "chunk:a:mine")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), "mine")
}

func TestSR7_LOG11_ErrorFallsBackAndLogs(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-1", "load", "loaderr=-32603", "sid=fresh-2"))
	assert.Equal(t, "fresh-2", s.ID)
	recs := h.log.find("continuation call failed")
	require.Len(t, recs, 1)
	assert.Equal(t, "session/load", recs[0].Attrs["method"])
	assert.Equal(t, "-32603", recs[0].Attrs["code"])
	assert.Equal(t, "this session started with a declared capability gap in: token counts, session continuation", h.notice(s))
}

func TestSR7_FallbackFailureReportedAsNew(t *testing.T) {
	h := newHarness(t)
	_, err := h.a.StartSession(context.Background(), h.resume("old-1", "resume", "resumeerr=-32603", "newerr=-32603"))
	assert.ErrorIs(t, err, &Error{Kind: KindResponseError, Message: `session/new error -32603: no session for you: {"why":"test"}`})
}

func TestSR8_LOG13_SameCodeAsControlIsNotImplemented(t *testing.T) {
	h := newHarness(t)
	h.startWith(h.resume("old-1", "resume", "resumeerr=-32601"))
	recs := h.log.find("continuation method not implemented")
	require.Len(t, recs, 1)
	assert.Equal(t, "session/resume", recs[0].Attrs["method"])
	assert.Equal(t, slog.LevelDebug, recs[0].Level)
	assert.Empty(t, h.log.find("continuation call failed"))
}

func TestSR8_LOG11_ControlAnsweredSuccessThenError(t *testing.T) {
	h := newHarness(t)
	h.startWith(h.resume("old-1", "resume", "control-ok", "resumeerr=-32601"))
	recs := h.log.find("continuation call failed")
	require.Len(t, recs, 1, "the control had no code to compare with")
	assert.Equal(t, "-32601", recs[0].Attrs["code"])
}

func TestSR8_LOG12_CallTimeout(t *testing.T) {
	h := newHarness(t)
	h.readTimeoutMS = 200
	s := h.startWith(h.resume("old-1", "load", "hang-load", "sid=fresh-2"))
	assert.Equal(t, "fresh-2", s.ID)
	recs := h.log.find("continuation call timed out")
	require.Len(t, recs, 1)
	assert.Equal(t, "session/load", recs[0].Attrs["method"])
}

// fakeClock is a settable clock whose waits record their duration and
// return at once.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
	fail  error
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) wait(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	if c.fail != nil {
		return c.fail
	}
	c.t = c.t.Add(d)
	return nil
}

func TestSR9_LOG14_LoadHeldPastCreationMinute(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)}
	h := newHarness(t, withClock(clk.now, clk.wait))
	first := h.start("load", "sid=created-here")
	h.stop(first)
	s := h.startWith(h.resume("created-here", "load", "loadreplay"))
	assert.Equal(t, "created-here", s.ID)
	assert.Equal(t, []time.Duration{30 * time.Second}, clk.waits)
	recs := h.log.find("session load deferred past the session's creation minute")
	require.Len(t, recs, 1)
	assert.Equal(t, "created-here", recs[0].Attrs["session_id"])
	assert.Equal(t, "30000", recs[0].Attrs["wait_ms"])
}

func TestSR9_NoHoldForOtherCwdOrLaterMinute(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)}
	a, err := New(nil, withClock(clk.now, clk.wait))
	require.NoError(t, err)
	a.recordCreation("/w", "s1")
	assert.Equal(t, 30*time.Second, a.loadHold("/w", "s1"))
	assert.Zero(t, a.loadHold("/other", "s1"), "keyed by cwd and id")
	assert.Zero(t, a.loadHold("/w", "s2"))
	clk.set(time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC))
	assert.Zero(t, a.loadHold("/w", "s1"), "the minute has passed")
	// A clock stepped backwards clamps to one minute.
	clk.set(time.Date(2026, 3, 1, 11, 50, 0, 0, time.UTC))
	assert.Equal(t, time.Minute, a.loadHold("/w", "s1"))
	// Records older than two minutes are evicted on insert.
	clk.set(time.Date(2026, 3, 1, 12, 3, 0, 0, time.UTC))
	a.recordCreation("/w", "s3")
	a.mu.Lock()
	_, kept := a.created[creationKey{"/w", "s1"}]
	a.mu.Unlock()
	assert.False(t, kept)
}

func TestSR9_ContextEndingDuringHoldIsPortExit(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC), fail: context.Canceled}
	h := newHarness(t, withClock(clk.now, clk.wait))
	first := h.start("load", "sid=created-here")
	h.stop(first)
	_, err := h.a.StartSession(context.Background(), h.resume("created-here", "load"))
	assert.Equal(t, KindPortExit, KindOf(err))
}

func TestSR10_NewSessionErrors(t *testing.T) {
	h := newHarness(t)
	err := h.startErr("newerr=-32000")
	assert.ErrorIs(t, err, &Error{Kind: KindCredentialUnverified, Message: `the agent runtime refused its credential: no session for you: {"why":"test"}`})
	err = h.startErr("newerr=-32603")
	assert.ErrorIs(t, err, &Error{Kind: KindResponseError, Message: `session/new error -32603: no session for you: {"why":"test"}`})
	err = h.startErr("newbad")
	assert.ErrorIs(t, err, &Error{Kind: KindResponseError, Message: "session/new response did not decode"})
	h.readTimeoutMS = 200
	err = h.startErr("new-hang")
	assert.ErrorIs(t, err, &Error{Kind: KindResponseTimeout, Message: "timed out waiting for a response"})
}

func TestSR11_ReportedIDIsTheCreatedOne(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.resume("old-9", "resume", "sid=new-1"))
	assert.Equal(t, "old-9", s.ID)
	h2 := newHarness(t)
	s2 := h2.startWith(h2.resume("old-9", "resume", "resumeerr=-32603", "sid=new-1"))
	assert.Equal(t, "new-1", s2.ID)
}
