//go:build linux

package realruntime

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBaseline(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "scenarios.baseline")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	b, err := ParseBaseline(write("# comment\n\nkilled-mid-command the command escapes the group\n"))
	require.NoError(t, err)
	assert.Equal(t, "the command escapes the group", b.Known(ScenarioKilledMidCommand))
	assert.Empty(t, b.Known(ScenarioResume))

	_, err = ParseBaseline(write("no-such-scenario reason\n"))
	assert.ErrorContains(t, err, `unknown scenario "no-such-scenario"`)
	_, err = ParseBaseline(write("resume\n"))
	assert.ErrorContains(t, err, "resume has no reason")

	b, err = ParseBaseline(filepath.Join(dir, "missing"))
	require.NoError(t, err, "no file is an empty baseline")
	assert.Empty(t, b.known)
}

// Every runtime's committed baseline parses.
func TestCommittedBaselinesParse(t *testing.T) {
	for _, spec := range Specs {
		LoadBaseline(t, spec.Kind)
	}
}

// The suite's command is found by its command line though it was given
// none of the runtime's environment, and CommandStarted sees it start.
func TestShellCommandIsFoundAndSeenStarting(t *testing.T) {
	work := t.TempDir()
	r := Runtime{Spec: Spec{Kind: "test"}, Mark: newMark()}
	started := r.CommandStarted(t, work)
	cmd := exec.Command("/bin/sh", "-c", r.ShellCommand(work))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no mark inherited
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the command's open of the fifo was not seen")
	}
	assert.Contains(t, r.Survivors(), cmd.Process.Pid)
	left := r.Gone(0)
	require.NotEmpty(t, left)
	assert.Contains(t, left[0], "cat "+r.fifoPath(work))
	r.killSurvivors()
	_ = cmd.Wait()
	assert.Empty(t, r.Survivors())
}

// A command that never comes leaves no writer blocked: cleanup releases it.
func TestCommandStartedReleasedAtCleanup(t *testing.T) {
	r := Runtime{Spec: Spec{Kind: "test"}, Mark: "4712"}
	t.Run("never started", func(t *testing.T) { r.CommandStarted(t, t.TempDir()) })
	// goleak (TestMain) fails the package if the writer's goroutine is
	// still blocked in open.
}

func TestBaselineVerdict(t *testing.T) {
	b := Baseline{path: "scenarios.baseline", known: map[Scenario]string{ScenarioKilledMidCommand: "escapes the group"}}
	for _, tc := range []struct {
		name       string
		id         Scenario
		failures   []string
		ok, passed bool
		msg        string
	}{
		{"unlisted pass", ScenarioResume, nil, true, true, ""},
		{"unlisted failure", ScenarioResume, []string{"did not continue"}, false, false, "did not continue"},
		{"listed failure", ScenarioKilledMidCommand, []string{"cat outlived it"}, true, false, "known failure (scenarios.baseline): escapes the group\ncat outlived it"},
		{"listed pass: stale", ScenarioKilledMidCommand, nil, false, true, "killed-mid-command passes now: remove it from scenarios.baseline (escapes the group)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, passed := b.verdict(tc.id, tc.failures)
			assert.Equal(t, tc.ok, ok, "the test's verdict")
			assert.Equal(t, tc.passed, passed, "the scenario's")
			assert.Equal(t, tc.msg, b.message(tc.id, tc.failures))
		})
	}
}
