//go:build linux

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// acprun driving the seven real runtimes pinned in conformance/runtimes
// against a fake model API on 127.0.0.1 (internal/fakemodel): the same
// scenarios as the adapter's (adapter/realruntime_test.go), through the
// command line, sharing runs the same way. A runtime is one entry of
// realruntime.Specs; a scenario it cannot do is a line of its
// scenarios.baseline.

// eachRuntime runs test once per pinned runtime, in parallel.
func eachRuntime(t *testing.T, test func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline)) {
	for _, spec := range realruntime.Specs {
		t.Run(string(spec.Kind), func(t *testing.T) {
			t.Parallel()
			test(t, spec.Kind, realruntime.LoadBaseline(t, spec.Kind))
		})
	}
}

// realRuntime sets kind up against a fake answering with script, and shows
// its whole tree gone at cleanup.
func realRuntime(t *testing.T, kind realruntime.Kind, script fakemodel.Script) (realruntime.Runtime, *fakemodel.Server) {
	t.Helper()
	fake := fakemodel.Start(t, script)
	rt := realruntime.Start(t, kind, fake)
	t.Cleanup(func() { rt.AssertGone(t, 5*time.Second) })
	return rt, fake
}

// realArgs are acprun's flags for a real runtime in work: JSON out, and
// a read timeout for a CPU-bound start on a loaded machine (a runtime
// that answers never waits it out).
func realArgs(work string, args ...string) []string {
	return append([]string{"--json", "--read-timeout", "300s", "--cwd", work}, args...)
}

// turns splits acprun's JSON lines into turns: each begins with its
// session_started line (TU-4). Lines before the first turn are dropped.
func turns(t *testing.T, out []byte) [][]map[string]any {
	t.Helper()
	var all [][]map[string]any
	for _, l := range clitest.JSONLines(t, out) {
		if l["type"] == "session_started" {
			all = append(all, nil)
		}
		if len(all) > 0 {
			all[len(all)-1] = append(all[len(all)-1], l)
		}
	}
	return all
}

// ofType returns the lines of one type.
func ofType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// messagesOf are the message members of lines.
func messagesOf(lines []map[string]any) []string {
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprint(l["message"]))
	}
	return out
}

// resumeLine is the resume line acprun prints after the start.
func resumeLine(t *testing.T, out []byte) map[string]any {
	t.Helper()
	for _, l := range clitest.JSONLines(t, out) {
		if l["type"] == "resume" {
			return l
		}
	}
	return nil
}

// turnOf returns turn i (from 0) of out, or nil.
func turnOf(all [][]map[string]any, i int) []map[string]any {
	if i < len(all) {
		return all[i]
	}
	return nil
}

const refusedText = "refused a permission request because this run is unattended and no one can approve it"

func TestE2E_DI10_CancelAfterRefusalExitsSix(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent("--cancel-after-refusal"), "permission")
	require.Equal(t, 6, r.status, r.stderr)
	res := last(t, r.stdout)
	assert.Equal(t, "input_required", res["exit_reason"])
	assert.Equal(t, "agent asked for a decision only a person can make: a permission this unattended run refused", res["message"])
}

// TestE2E_EV3_TU4_PM1_SR5_TU7_RealRuntime_Conversation: one acprun run
// of three prompts (streamed text, a second turn on the same process, a
// refused write whose file never appears), then one resuming the saved
// session in a new process, whose second prompt is interrupted mid-stream
// with Ctrl-C (one session/cancel; exit 5); nothing of either run's
// runtime left.
func TestE2E_EV3_TU4_PM1_SR5_TU7_RealRuntime_Conversation(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline) {
		work := t.TempDir()
		rt, fake := realruntime.StartSuite(t, kind, work)
		first := acprun(t, realArgs(work, "--command", rt.Command(),
			realruntime.PromptRemember, realruntime.PromptRecall, realruntime.PromptWrite)...)
		all := turns(t, first.stdout)
		res := last(t, first.stdout)
		// How the run ended, for every failure below.
		ended := fmt.Sprintf("acprun exited %d: %v\nstderr:\n%s", first.status, res, first.stderr)

		base.Run(t, realruntime.ScenarioStreamedText, func(t *testing.T, c *realruntime.Check) {
			turn := turnOf(all, 0)
			assert.Contains(c, messagesOf(turn), realruntime.StreamedText, ended)
			assert.Len(c, ofType(turn, "turn_completed"), 1)
			assert.Greater(c, countEmpty(turn), 1, "EV-3: one empty notification per streamed chunk")
			assert.True(c, fake.ModelRequestContains(realruntime.PromptRemember))
		})
		base.Run(t, realruntime.ScenarioTwoTurns, func(t *testing.T, c *realruntime.Check) {
			turn := turnOf(all, 1)
			assert.Len(c, ofType(turn, "turn_completed"), 1, ended)
			if len(all) >= 2 {
				assert.Equal(c, all[0][0]["agent_pid"], all[1][0]["agent_pid"], "both turns on one process")
			}
			assert.True(c, fake.ModelRequestContains(realruntime.PromptRecall, realruntime.Remembered), "the second turn carried the first one's conversation")
		})
		base.Run(t, realruntime.ScenarioRefusedPermission, func(t *testing.T, c *realruntime.Check) {
			turn := turnOf(all, 2)
			assert.Contains(c, messagesOf(turn), refusedText, "PM-1; %s", ended)
			assert.NoFileExists(c, realruntime.WritePath(work), "the refused write never ran")
			assert.EqualValues(c, 1, res["permissions_refused"], "DI-11")
			stops := rt.AfterRefusal == realruntime.StopsAtRefusal || rt.AfterRefusal == realruntime.Cancels
			assert.Equal(c, stops, res["stopped_at_refusal"], "DI-11: %s", rt.AfterRefusal)
			if rt.AfterRefusal == realruntime.Cancels {
				assert.Equal(c, 6, first.status, ended)
				assert.Equal(c, "input_required", res["exit_reason"])
				assert.Equal(c, "turn_input_required", res["error_kind"])
			} else {
				assert.Equal(c, 0, first.status, ended)
				assert.Equal(c, "completed", res["exit_reason"])
			}
		})

		id := fmt.Sprint(res["session_id"])
		wire := filepath.Join(t.TempDir(), "wire.ndjson")
		exe, err := os.Executable()
		require.NoError(t, err)
		second := startAcprun(t, realArgs(work, "--resume", id, "--command", rt.Tapped(exe, wire),
			realruntime.PromptResumed, realruntime.PromptSlow, "never sent")...)
		// Each streamed chunk prints an empty notification (EV-3): the
		// first one after the first turn's end means the model's slow
		// stream is under way.
		slowing := second.stdout.waitUntil(t, func(out string) bool {
			i := strings.Index(out, `"type":"turn_completed"`)
			return i >= 0 && strings.Contains(out[i:], `"message":"",`)
		})
		if slowing {
			require.NoError(t, second.cmd.Process.Signal(os.Interrupt))
		}
		status := second.wait(t)
		out := second.stdout.bytes()
		base.Run(t, realruntime.ScenarioResume, func(t *testing.T, c *realruntime.Check) {
			r := resumeLine(t, out)
			if assert.NotNil(c, r, "a resume line; stdout:\n%s\nstderr:\n%s", out, second.stderr.bytes()) {
				assert.Equal(c, true, r["continued"], "%v", r["reason"])
				assert.Equal(c, id, r["session_id"], "the saved session continued")
			}
			assert.True(c, fake.ModelRequestContains(realruntime.PromptResumed, realruntime.Remembered), "the resumed conversation reached the model")
		})
		base.Run(t, realruntime.ScenarioCancel, func(t *testing.T, c *realruntime.Check) {
			assert.True(c, slowing, "the slow turn streamed")
			assert.Equal(c, 5, status, "%s", second.stderr.bytes())
			res := last(t, out)
			assert.Equal(c, "cancelled", res["exit_reason"])
			assert.EqualValues(c, 2, res["turns"], "the third prompt is never sent")
			assert.Equal(c, 1, realruntime.CountMethod(t, wire, "session/cancel"), "exactly one session/cancel")
		})
		base.Run(t, realruntime.ScenarioNothingLeft, func(t *testing.T, c *realruntime.Check) {
			if left := rt.Gone(5 * time.Second); len(left) > 0 {
				c.Errorf("processes of the runtime's tree outlived acprun:\n%s", strings.Join(left, "\n"))
			}
		})
		realruntime.AssertOffline(t, fake)
	})
}

// countEmpty counts the empty notifications of a turn.
func countEmpty(turn []map[string]any) int {
	n := 0
	for _, l := range ofType(turn, "notification") {
		if l["message"] == "" {
			n++
		}
	}
	return n
}

// TestE2E_SR7_DI6_RealRuntime_UnknownResumeThenKilledMidCommand: acprun
// resuming an unknown session says it started a new one, and the runtime,
// SIGKILLed while a shell command it started runs, ends the turn
// port_exit (exit 4) with nothing of its tree left, the command included.
func TestE2E_SR7_DI6_RealRuntime_UnknownResumeThenKilledMidCommand(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind, base realruntime.Baseline) {
		work := t.TempDir()
		rt, fake := realruntime.StartSuite(t, kind, work, realruntime.CommandsUnasked)
		started := rt.CommandStarted(t, work)
		unknown := realruntime.UnknownSessionID()
		run := startAcprun(t, realArgs(work, "--resume", unknown, "--command", rt.Command(), realruntime.PromptCommand)...)
		if !run.stdout.waitUntil(t, func(out string) bool { return strings.Contains(out, `"type":"resume"`) }) {
			t.Fatalf("acprun ended before its resume line:\n%s\nstderr:\n%s", run.stdout.bytes(), run.stderr.bytes())
		}
		base.Run(t, realruntime.ScenarioResumeUnknown, func(t *testing.T, c *realruntime.Check) {
			r := resumeLine(t, run.stdout.bytes())
			if assert.NotNil(c, r) {
				assert.Equal(c, false, r["continued"])
				assert.Equal(c, unknown, r["requested"])
				assert.NotEqual(c, unknown, r["session_id"], "a new session")
				assert.NotEmpty(c, r["reason"])
			}
		})
		base.Run(t, realruntime.ScenarioKilledMidCommand, func(t *testing.T, c *realruntime.Check) {
			select {
			case <-started:
			case <-run.done:
				c.Errorf("acprun ended before the command started (exit %d): %s\n%s", run.cmd.ProcessState.ExitCode(), run.stdout.bytes(), run.stderr.bytes())
				return
			}
			var pid int
			for _, l := range clitest.JSONLines(t, run.stdout.bytes()) {
				if l["type"] == "session_started" {
					pid, _ = strconv.Atoi(fmt.Sprint(l["agent_pid"]))
				}
			}
			if !assert.Positive(c, pid, "the runtime's pid") {
				return
			}
			outside := rt.OutsideGroup(pid)
			t.Logf("outside the runtime's process group while the command ran: %q", outside)
			assert.NotEmpty(c, outside, "the command ran outside the runtime's process group, which only containment ends")
			assert.NoError(c, syscall.Kill(pid, syscall.SIGKILL))
			assert.Equal(c, 4, run.wait(t), "%s", run.stderr.bytes())
			res := last(t, run.stdout.bytes())
			assert.Equal(c, "turn_failed", res["exit_reason"])
			assert.Equal(c, "port_exit", res["error_kind"])
			if left := rt.Gone(5 * time.Second); len(left) > 0 {
				c.Errorf("processes of the runtime's tree outlived acprun:\n%s", strings.Join(left, "\n"))
			}
		})
		realruntime.AssertOffline(t, fake)
	})
}

// TestE2E_PM4_DI11_RealRuntime_QwenQuirkShown: Qwen Code calls
// craft/drainMidTurnQueue, a method of its own without the "_" prefix ACP
// gives extensions, after the refused write's tool batch; the adapter
// answers it -32601 (PM-4), and acprun's text view shows it as the
// runtime's quirk, not as a broken line (that a second call is not shown
// again is quirks_test's: the pinned Qwen calls it once here). The turn
// says in words that the runtime stopped at the refusal (DI-11).
func TestE2E_PM4_DI11_RealRuntime_QwenQuirkShown(t *testing.T) {
	work := t.TempDir()
	rt, fake := realruntime.StartSuite(t, realruntime.QwenCode, work)
	wire := filepath.Join(t.TempDir(), "wire.ndjson")
	exe, err := os.Executable()
	require.NoError(t, err)
	r := acprun(t, "--read-timeout", "300s", "--cwd", work, "--command", rt.Tapped(exe, wire), realruntime.PromptWrite)
	require.Equal(t, 0, r.status, "%s\n%s", r.stdout, r.stderr)
	out := string(r.stdout)
	tapped, err := os.ReadFile(wire)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(tapped), `"code":-32601`), "the -32601 went to the runtime (PM-4)")
	assert.Equal(t, 1, strings.Count(out, "craft/drainMidTurnQueue"), out)
	assert.Contains(t, out, "  quirk     the runtime called craft/drainMidTurnQueue, its own method without the \"_\" prefix ACP gives extensions")
	assert.NotContains(t, out, "malformed")
	assert.Contains(t, out, "  note      the runtime stopped at a refused permission; nothing ran after it\n")
	assert.NoFileExists(t, realruntime.WritePath(work))
	realruntime.AssertOffline(t, fake)
}

// TestE2E_DI11_RealRuntime_RejectedKeyGivesItsHint: the model API answers
// 401 at the session's first model call, with OpenAI's words for a bad
// key or with words that name the status. Qwen Code fails the prompt
// -32603 "Internal error" with the provider's status and words only in
// the error's data, which reach acprun's output (DI-11); Cline fails it
// -32603 with the provider's words, or -32000 "Authentication required"
// when they name the status. Each gets the one rejected-key hint.
func TestE2E_DI11_RealRuntime_RejectedKeyGivesItsHint(t *testing.T) {
	for _, tc := range []struct {
		kind     realruntime.Kind
		provider string // the 401's message
		message  string // acprun's message for the failed turn
		output   []string
	}{
		{realruntime.QwenCode, "Incorrect API key provided", "session/prompt error -32603: Internal error", []string{"401 Incorrect API key provided"}},
		{realruntime.Cline, "Incorrect API key provided", "session/prompt error -32603: Internal error: Incorrect API key provided", nil},
		{realruntime.Cline, "401 Unauthorized", "session/prompt error -32000: Authentication required: 401 Unauthorized", nil},
	} {
		t.Run(string(tc.kind)+"/"+tc.provider, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.Start(t, func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Status: http.StatusUnauthorized, Error: tc.provider}
			}, fakemodel.Options{Lifetime: 20 * time.Minute})
			rt := realruntime.Start(t, tc.kind, fake)
			work := t.TempDir()
			r := acprun(t, realArgs(work, "--command", rt.Command(), realruntime.PromptRemember)...)
			assert.Equal(t, 4, r.status, "%s\n%s", r.stdout, r.stderr)
			res := last(t, r.stdout)
			assert.Equal(t, "turn_failed", res["exit_reason"])
			assert.Equal(t, tc.message, res["message"])
			for _, want := range tc.output {
				assert.Contains(t, res["detail"], want, "the error's data reaches the output")
			}
			assert.Contains(t, r.stderr, "acprun: hint: the session started but the model provider rejected the runtime's key at the first model call")
			realruntime.AssertOffline(t, fake)
		})
	}
}
