//go:build linux

package adapter

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// The seven real runtimes pinned in conformance/runtimes, doing real turns
// through the adapter against a fake model API on 127.0.0.1
// (internal/fakemodel): what the adapter meets in production, minus the
// network. A runtime is one entry of realruntime.Specs; a scenario it
// cannot do is a line of its scenarios.baseline (realruntime.Baseline).
//
// Each runtime start costs seconds of CPU, so the scenarios share
// sessions: one conversation (streamed text, a second turn, a refused
// write; then resumed in a new process and cancelled mid-stream), and one
// start that falls back from an unknown session id and has its runtime
// killed mid-command.

// realParams are the start parameters of command in h's workspace. The
// read timeout is generous: a runtime's start is CPU-bound, and the
// suite runs beside others on two cores.
func realParams(h *harness, command string) StartParams {
	return StartParams{
		WorkspacePath: h.dir,
		Agent:         AgentConfig{Kind: KindName, Command: command, ReadTimeoutMS: 300000, StopGraceMS: 3000},
	}
}

// eachRuntime runs test once per pinned runtime, in parallel.
func eachRuntime(t *testing.T, test func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline)) {
	for _, spec := range realruntime.Specs {
		t.Run(string(spec.Kind), func(t *testing.T) {
			t.Parallel()
			test(t, spec.Kind, realruntime.LoadBaseline(t, spec.Kind))
		})
	}
}

// emptyNotifications counts the empty notifications of a turn: one per
// streamed chunk (EV-3).
func emptyNotifications(ev *events) int {
	n := 0
	for _, m := range ev.messages(EventNotification) {
		if m == "" {
			n++
		}
	}
	return n
}

// toolRequestsFor counts the model requests offering tools whose last
// user message holds prompt: the model calls of that prompt's turn.
func toolRequestsFor(fake *fakemodel.Server, prompt string) (n int, toldOfTool bool) {
	for _, r := range fake.ModelRequests() {
		if r.OffersTools() && strings.Contains(r.LastUserText(), prompt) {
			n++
			toldOfTool = toldOfTool || r.EndsWithToolResult()
		}
	}
	return n, toldOfTool
}

const refusedText = "refused a permission request because this run is unattended and no one can approve it"

// TestEV3_TU4_PM1_SR5_TU7_RealRuntime_Conversation: a streamed text turn
// (EV-3, EV-4), a second turn on the same process (TU-4), a refused write
// whose file never appears (PM-1, DI-10 where the runtime cancels); then
// the session resumed in a new process (SR-5) and a turn cancelled
// mid-stream with exactly one session/cancel (TU-7); nothing of either
// process's tree left (TD).
func TestEV3_TU4_PM1_SR5_TU7_RealRuntime_Conversation(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline) {
		h := newHarness(t)
		rt, fake := realruntime.StartSuite(t, kind, h.dir)
		s := h.startWith(realParams(h, rt.Command()))

		base.Run(t, realruntime.ScenarioStreamedText, func(t *testing.T, c *realruntime.Check) {
			res, err, ev := h.turn(s, realruntime.PromptRemember)
			if !assert.NoError(c, err) {
				return
			}
			assert.Equal(c, EventTurnCompleted, res.Outcome)
			assert.Equal(c, realruntime.StreamedText, ev.lastText("Hello"), "EV-4: the chunks accumulate into one message")
			assert.Greater(c, emptyNotifications(ev), 1, "EV-3: one empty notification per streamed chunk")
			assert.True(c, fake.ModelRequestContains(realruntime.PromptRemember), "the prompt reached the model")
			assert.NotEmpty(c, rt.Survivors(), "the runtime's tree is found by its mark, so Gone sees it")
		})
		base.Run(t, realruntime.ScenarioTwoTurns, func(t *testing.T, c *realruntime.Check) {
			res, err, ev := h.turn(s, realruntime.PromptRecall)
			if !assert.NoError(c, err) {
				return
			}
			assert.Equal(c, EventTurnCompleted, res.Outcome)
			if assert.NotEmpty(c, ev.list()) {
				assert.Equal(c, EventSessionStarted, ev.list()[0].Type, "TU-4: every turn")
				assert.Equal(c, s.AgentPID, ev.list()[0].AgentPID, "one process")
			}
			assert.True(c, fake.ModelRequestContains(realruntime.PromptRecall, realruntime.Remembered), "the second turn carried the first one's conversation")
		})
		base.Run(t, realruntime.ScenarioRefusedPermission, func(t *testing.T, c *realruntime.Check) {
			res, err, ev := h.turn(s, realruntime.PromptWrite)
			assert.Contains(c, ev.texts(), refusedText, "PM-1")
			assert.NoFileExists(c, realruntime.WritePath(h.dir), "the refused write never ran")
			calls, told := toolRequestsFor(fake, realruntime.PromptWrite)
			assert.Equal(c, 1, res.PermissionsRefused, "DI-11: the one refused request is counted")
			switch rt.AfterRefusal {
			case realruntime.CarriesOn:
				assert.NoError(c, err)
				assert.Equal(c, EventTurnCompleted, res.Outcome)
				assert.True(c, told, "the runtime told the model the tool was refused")
				assert.True(c, res.UpdatedAfterRefusal, "DI-11: the runtime carried on after the refusal")
			case realruntime.StopsAtRefusal, realruntime.StopsSaying:
				assert.NoError(c, err)
				assert.Equal(c, EventTurnCompleted, res.Outcome, "DI-2: end_turn")
				assert.Equal(c, 1, calls, "no model call after the refusal")
				assert.Equal(c, rt.AfterRefusal == realruntime.StopsSaying, res.UpdatedAfterRefusal, "DI-11: %s", rt.AfterRefusal)
			case realruntime.Cancels:
				assert.Equal(c, KindTurnInputRequired, KindOf(err))
				assert.Equal(c, EventTurnInputRequired, res.Outcome)
				assert.Equal(c, "agent asked for a decision only a person can make: a permission this unattended run refused", res.Message)
				assert.False(c, res.UpdatedAfterRefusal, "DI-11: nothing followed the refusal")
			}
		})
		h.stop(s)

		// A new adapter, like a new orchestrator process: no SR-9 hold.
		h2 := newHarness(t)
		h2.dir = h.dir
		wire := filepath.Join(t.TempDir(), "wire.ndjson")
		p := realParams(h2, rt.Tapped(os.Args[0], wire))
		p.ResumeSessionID = s.ID
		s2 := h2.startWith(p)
		base.Run(t, realruntime.ScenarioResume, func(t *testing.T, c *realruntime.Check) {
			assert.Equal(c, s.ID, s2.ID, "the saved session continued")
			assert.NotEqual(c, s.AgentPID, s2.AgentPID, "in a new process")
			_, err, _ := h2.turn(s2, realruntime.PromptResumed)
			assert.NoError(c, err)
			assert.True(c, fake.ModelRequestContains(realruntime.PromptResumed, realruntime.Remembered), "the resumed conversation reached the model")
		})
		base.Run(t, realruntime.ScenarioCancel, func(t *testing.T, c *realruntime.Check) {
			// Cancelled at the first streamed chunk: the model's slow
			// stream is under way (it lasts 30s unless cancelled).
			ctx, cancel, _, onEvent := cancelOnChunk()
			defer cancel()
			res, err := h2.a.RunTurn(ctx, s2, TurnParams{Prompt: realruntime.PromptSlow, OnEvent: onEvent})
			assert.Equal(c, KindTurnCancelled, KindOf(err), "%v", err)
			assert.Equal(c, EventTurnCancelled, res.Outcome)
			h2.stop(s2)
			assert.Equal(c, 1, realruntime.CountMethod(t, wire, "session/cancel"), "TU-7: exactly one session/cancel")
		})
		h2.stop(s2)
		base.Run(t, realruntime.ScenarioNothingLeft, func(t *testing.T, c *realruntime.Check) {
			if left := rt.Gone(5 * time.Second); len(left) > 0 {
				c.Errorf("processes of the runtime's tree outlived both sessions:\n%s", strings.Join(left, "\n"))
			}
		})
		realruntime.AssertOffline(t, fake)
	})
}

// TestSR7_DI6_RealRuntime_UnknownResumeThenKilledMidCommand: an unknown
// session id falls back to a new session (SR-7); the runtime, SIGKILLed
// while a shell command it started runs, ends the turn port_exit (DI-6),
// and once the session is stopped nothing of its tree is left, the
// command included, though runtimes start commands in a session of their
// own, out of the runtime's process group.
func TestSR7_DI6_RealRuntime_UnknownResumeThenKilledMidCommand(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline) {
		h := newHarness(t)
		rt, fake := realruntime.StartSuite(t, kind, h.dir, realruntime.CommandsUnasked)
		p := realParams(h, rt.Command())
		p.ResumeSessionID = realruntime.UnknownSessionID()
		s := h.startWith(p)
		base.Run(t, realruntime.ScenarioResumeUnknown, func(t *testing.T, c *realruntime.Check) {
			assert.NotEqual(c, p.ResumeSessionID, s.ID, "SR-7: a new session")
			assert.NotEmpty(c, s.ID)
			tried := len(h.log.find(logContinuationFailed)) + len(h.log.find(logContinuationNotImpl)) + len(h.log.find(logContinuationTimedOut))
			assert.Equal(c, 1, tried, "one continuation was tried and did not continue")
		})
		base.Run(t, realruntime.ScenarioKilledMidCommand, func(t *testing.T, c *realruntime.Check) {
			started := rt.CommandStarted(t, h.dir)
			type turnEnd struct {
				res TurnResult
				err error
			}
			ended := make(chan turnEnd, 1)
			go func() {
				res, err, _ := h.turn(s, realruntime.PromptCommand)
				ended <- turnEnd{res, err}
			}()
			select {
			case <-started:
			case e := <-ended:
				c.Errorf("the turn ended before the command started: %v %v", e.res.Outcome, e.err)
				return
			}
			pid, err := strconv.Atoi(s.AgentPID)
			if !assert.NoError(c, err) {
				return
			}
			// All seven start their commands in a session of their own
			// (codex in bwrap's): the group kill misses the command, and
			// only containment (on by default) ends it.
			outside := rt.OutsideGroup(pid)
			t.Logf("outside the runtime's process group while the command ran: %q", outside)
			assert.NotEmpty(c, outside, "the command ran outside the runtime's process group")
			assert.NoError(c, syscall.Kill(pid, syscall.SIGKILL))
			e := <-ended
			assert.Equal(c, KindPortExit, KindOf(e.err), "DI-6: %v", e.err)
			assert.Equal(c, EventTurnFailed, e.res.Outcome)
			h.stop(s)
			if left := rt.Gone(5 * time.Second); len(left) > 0 {
				c.Errorf("processes of the runtime's tree outlived the session:\n%s", strings.Join(left, "\n"))
			}
		})
		realruntime.AssertOffline(t, fake)
	})
}

// TestTD15_RealRuntime_ClineHubDaemonGoneWithTheSession: Cline's default
// session backend starts a detached hub daemon that, without containment,
// outlived every session for over ten minutes (issue #24); with
// containment on, the default, it is gone once the session is stopped.
func TestTD15_RealRuntime_ClineHubDaemonGoneWithTheSession(t *testing.T) {
	h := newHarness(t)
	rt, fake := realruntime.StartSuite(t, realruntime.Cline, h.dir, realruntime.ClineDefaultBackend)
	s := h.startWith(realParams(h, rt.Command()))
	res, err, _ := h.turn(s, realruntime.PromptRemember)
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, res.Outcome)
	daemons := rt.Matching("--cline-hub-daemon")
	t.Logf("hub daemon: %q", daemons)
	assert.NotEmpty(t, daemons, "the hub daemon ran during the session")
	h.stop(s)
	rt.AssertGone(t, 5*time.Second)
	realruntime.AssertOffline(t, fake)
}
