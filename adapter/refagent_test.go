package adapter

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference agent (acpkit.dev/conformance/cmd/refagent) built once for
// the tests below; TestMain removes the directory.
var (
	refOnce sync.Once
	refBin  string
	refErr  error
	refDir  string
)

func refagent(t *testing.T) string {
	t.Helper()
	refOnce.Do(func() {
		refDir, refErr = os.MkdirTemp("", "adapter-refagent-")
		if refErr != nil {
			return
		}
		refBin = filepath.Join(refDir, "refagent")
		out, err := exec.Command("go", "build", "-o", refBin, "acpkit.dev/conformance/cmd/refagent").CombinedOutput()
		if err != nil {
			refErr = err
			refBin = string(out)
		}
	})
	if refErr != nil {
		t.Fatalf("building the reference agent: %v\n%s", refErr, refBin)
	}
	return refBin
}

func cleanupRefagent() {
	if refDir != "" {
		os.RemoveAll(refDir)
	}
}

// refParams starts the reference agent with flags.
func (h *harness) ref(flags ...string) StartParams {
	p := h.params()
	p.Agent.Command = strings.Join(append([]string{refagent(h.t)}, flags...), " ")
	return p
}

func TestTU4_RefAgent_FullTurn(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	assert.Equal(t, "sess-1", s.ID)
	r, err, ev := h.turn(s, "full")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.True(t, r.SpendUnaccounted, "MS-12: reached a model, no figure")
	assert.Equal(t, EventSessionStarted, ev.types()[0])
	assert.Equal(t, []string{
		"this session started with a declared capability gap in: token counts, session continuation",
		"Hello, from the reference agent.",
		"You said: full",
	}, ev.texts())
	assert.Equal(t, []string{"reasoning block", "plan update"}, ev.messages(EventOtherMessage))
	var tools []string
	for _, e := range ev.list() {
		if e.Type == EventToolResult {
			tools = append(tools, e.ToolName+map[bool]string{true: ":failed", false: ":ok"}[e.ToolError])
		}
	}
	assert.ElementsMatch(t, []string{"read:ok", "edit:ok", "execute:failed"}, tools)
	recs := h.log.find("agent implementation")
	require.Len(t, recs, 1)
	assert.Equal(t, "acpkit-refagent", recs[0].Attrs["name"])
}

func TestTU7_RefAgent_CancelSlowTurn(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	ctx, cancel, _, cb := cancelOnChunk()
	defer cancel()
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "slow", OnEvent: cb})
	assert.ErrorIs(t, err, &Error{Kind: KindTurnCancelled, Message: "turn cancelled"})
	assert.Equal(t, EventTurnCancelled, r.Outcome)
	_, err, _ = h.turn(s, "text")
	assert.NoError(t, err)
}

func TestDI1_RefAgent_CancelIgnoringRuntimeStillCancelled(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref("--cancel-stop-reason", "end_turn"))
	ctx, cancel, _, cb := cancelOnChunk()
	defer cancel()
	r, err := h.a.RunTurn(ctx, s, TurnParams{Prompt: "slow", OnEvent: cb})
	assert.Equal(t, KindTurnCancelled, KindOf(err))
	assert.Equal(t, EventTurnCancelled, r.Outcome)
}

func TestPM1_RefAgent_PermissionRefused(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	_, err, ev := h.turn(s, "permission")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), "refused a permission request because this run is unattended and no one can approve it")
	_, err, _ = h.turn(s, "permission-allow-only")
	assert.Equal(t, KindTurnInputRequired, KindOf(err))
}

func TestSR5_SR9_RefAgent_LoadAcrossProcesses(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)}
	h := newHarness(t, withClock(clk.now, clk.wait))
	state := t.TempDir()
	s := h.startWith(h.ref("--load-session", "--state-dir", state))
	_, err, _ := h.turn(s, "text")
	require.NoError(t, err)
	h.stop(s)

	p := h.ref("--load-session", "--state-dir", state)
	p.ResumeSessionID = s.ID
	s2 := h.startWith(p)
	assert.Equal(t, s.ID, s2.ID, "confirmed by the replay")
	assert.Equal(t, []time.Duration{50 * time.Second}, clk.waits, "held past the creation minute")
	_, err, ev := h.turn(s2, "text")
	require.NoError(t, err)
	assert.Contains(t, ev.texts(), "You said: text", "the replayed answer reaches the first turn")
}

func TestCL1_RefAgent_CloseThroughProtocol(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref("--close"))
	h.stop(s)
	assert.Len(t, h.log.find("session closed through the protocol"), 1)
}

func TestDI6_RefAgent_ExitMidTurn(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	_, err, _ := h.turn(s, "exit=3")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent's connection ended before a response arrived"})
}

func TestDI7_RefAgent_OversizeLine(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	_, err, _ := h.turn(s, "oversize")
	assert.Equal(t, KindTurnOutcomeUnknown, KindOf(err))
}

func TestEV9_EV10_RefAgent_GarbageAndForeign(t *testing.T) {
	h := newHarness(t)
	s := h.startWith(h.ref())
	_, err, ev := h.turn(s, "garbage foreign unknown-update malformed-update null-id-update")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"received a line that could not be parsed as JSON-RPC",
		"received a session update of an unrecognized kind",
		"received a session update of an unrecognized kind",
	}, ev.messages(EventMalformed))
	assert.Len(t, h.log.find("dropping session/update for a foreign session"), 1)
}

func TestTD5_RefAgent_IgnoresSigtermAndStdinClose(t *testing.T) {
	h := newHarness(t)
	p := h.ref("--ignore-sigterm", "--ignore-stdin-close")
	p.Agent.StopGraceMS = 300
	s := h.startWith(p)
	h.stop(s)
	assert.Len(t, h.log.find("agent did not exit inside the graceful period and was force-terminated"), 1)
}

func TestHS3_RefAgent_CredentialRefused(t *testing.T) {
	h := newHarness(t)
	_, err := h.a.StartSession(context.Background(), h.ref("--fail-initialize", "-32000"))
	assert.Equal(t, KindCredentialUnverified, KindOf(err))
	_, err = h.a.StartSession(context.Background(), h.ref("--fail-new-session", "-32000"))
	assert.Equal(t, KindCredentialUnverified, KindOf(err))
}
