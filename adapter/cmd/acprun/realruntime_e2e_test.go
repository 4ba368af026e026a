//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// acprun driving the real runtimes pinned in conformance/runtimes against
// a fake model API on 127.0.0.1 (internal/fakemodel).

// eachRuntime runs test once per pinned runtime.
func eachRuntime(t *testing.T, test func(t *testing.T, kind realruntime.Kind)) {
	for _, kind := range realruntime.Kinds {
		t.Run(string(kind), func(t *testing.T) { test(t, kind) })
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

// eventTypes are the type members of acprun's JSON lines.
func eventTypes(t *testing.T, out []byte) []string {
	t.Helper()
	var types []string
	for _, l := range clitest.JSONLines(t, out) {
		types = append(types, fmt.Sprint(l["type"]))
	}
	return types
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func TestE2E_DI10_CancelAfterRefusalExitsSix(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent("--cancel-after-refusal"), "permission")
	require.Equal(t, 6, r.status, r.stderr)
	res := last(t, r.stdout)
	assert.Equal(t, "input_required", res["exit_reason"])
	assert.Equal(t, "agent asked for a decision only a person can make: a permission this unattended run refused", res["message"])
}

func TestE2E_EV3_RealRuntime_StreamedTextTurn(t *testing.T) {
	const text = "Hello from the fake model, in a handful of streamed chunks."
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		rt, fake := realRuntime(t, kind, fakemodel.Text(text))
		r := acprun(t, "--json", "--command", rt.Command(), "Say hello.")
		require.Equal(t, 0, r.status, r.stderr)
		assert.Contains(t, string(r.stdout), `"message":"`+text+`"`)
		assert.Equal(t, "completed", last(t, r.stdout)["exit_reason"])
		assert.True(t, fake.ModelRequestContains("Say hello."))
	})
}

func TestE2E_DI10_RealRuntime_RefusedWrite(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		work := t.TempDir()
		target := filepath.Join(work, "made-by-model.txt")
		rt, _ := realRuntime(t, kind, realruntime.WriteScript(kind, target))
		r := acprun(t, "--json", "--cwd", work, "--command", rt.Command(), "Create made-by-model.txt.")
		assert.Contains(t, string(r.stdout), "refused a permission request because this run is unattended")
		assert.NoFileExists(t, target, "the refused write never ran")
		res := last(t, r.stdout)
		switch kind {
		case realruntime.ClaudeAgentACP:
			assert.Equal(t, 0, r.status, r.stderr)
			assert.Equal(t, "completed", res["exit_reason"])
		case realruntime.CodexACP:
			assert.Equal(t, 6, r.status, r.stderr)
			assert.Equal(t, "input_required", res["exit_reason"])
			assert.Equal(t, "turn_input_required", res["error_kind"])
		}
	})
}

func TestE2E_TU4_RealRuntime_TwoTurnsOneProcess(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		rt, fake := realRuntime(t, kind, fakemodel.Text("Noted."))
		r := acprun(t, "--json", "--command", rt.Command(), "The first prompt mentions a lighthouse.", "The second prompt asks what the first one mentioned.")
		require.Equal(t, 0, r.status, r.stderr)
		types := eventTypes(t, r.stdout)
		assert.Equal(t, 2, countOf(types, "session_started"))
		assert.Equal(t, 2, countOf(types, "turn_completed"))
		pids := map[string]bool{}
		for _, l := range clitest.JSONLines(t, r.stdout) {
			if l["type"] == "session_started" {
				pids[fmt.Sprint(l["agent_pid"])] = true
			}
		}
		assert.Len(t, pids, 1, "both turns on one process")
		assert.True(t, fake.ModelRequestContains("second prompt", "lighthouse"), "the second turn carried the first one's conversation")
	})
}

func TestE2E_SR5_RealRuntime_ResumeInNewProcess(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		rt, fake := realRuntime(t, kind, fakemodel.Text("I will remember it."))
		work := t.TempDir()
		first := acprun(t, "--json", "--cwd", work, "--command", rt.Command(), "Remember the word pineapple.")
		require.Equal(t, 0, first.status, first.stderr)
		id := fmt.Sprint(last(t, first.stdout)["session_id"])
		require.NotEmpty(t, id)

		second := acprun(t, "--json", "--cwd", work, "--resume", id, "--command", rt.Command(), "Which word did I ask you to remember?")
		require.Equal(t, 0, second.status, second.stderr)
		assert.Equal(t, id, last(t, second.stdout)["session_id"], "the saved session continued")
		assert.True(t, fake.ModelRequestContains("Which word", "pineapple"), "the resumed conversation reached the model")
	})
}

func TestE2E_TU7_RealRuntime_CtrlCMidStream(t *testing.T) {
	eachRuntime(t, func(t *testing.T, kind realruntime.Kind) {
		rt, _ := realRuntime(t, kind, func(r fakemodel.Request) fakemodel.Reply {
			if !r.OffersTools() {
				return fakemodel.Reply{Text: "A slow session"}
			}
			return fakemodel.Reply{Text: "Streaming slowly:", Slow: true}
		})
		wire := filepath.Join(t.TempDir(), "wire.ndjson")
		exe, err := os.Executable()
		require.NoError(t, err)
		s := startAcprun(t, "--json", "--command", rt.Tapped(exe, wire), "Stream for a long time.", "never sent")
		// Each streamed chunk prints an empty notification (EV-3): the
		// first one means the model's slow stream is under way.
		s.stdout.waitFor(t, `"message":"",`)
		require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
		require.Equal(t, 5, s.wait(t), string(s.stderr.bytes()))
		res := last(t, s.stdout.bytes())
		assert.Equal(t, "cancelled", res["exit_reason"])
		assert.EqualValues(t, 1, res["turns"], "the second prompt is never sent")
		assert.Equal(t, 1, realruntime.CountMethod(t, wire, "session/cancel"), "exactly one session/cancel")
	})
}
