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
	b, err := ParseBaseline(writeBaseline(t, "# comment\n\nkilled-mid-command the command escapes the group\n"))
	require.NoError(t, err)
	assert.Equal(t, "the command escapes the group", b.Known(ScenarioKilledMidCommand))
	assert.Empty(t, b.Known(ScenarioResume))
	b, err = ParseBaseline(writeBaseline(t, "resume? load refused at times\n"))
	require.NoError(t, err)
	assert.Equal(t, "load refused at times", b.Known(ScenarioResume), "a ? marks it intermittent")

	_, err = ParseBaseline(writeBaseline(t, "no-such-scenario reason\n"))
	assert.ErrorContains(t, err, `unknown scenario "no-such-scenario"`)
	_, err = ParseBaseline(writeBaseline(t, "resume\n"))
	assert.ErrorContains(t, err, "resume has no reason")

	b, err = ParseBaseline(filepath.Join(t.TempDir(), "missing"))
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
	b, err := ParseBaseline(writeBaseline(t, "killed-mid-command escapes the group\nresume? load refused at times\n"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name       string
		id         Scenario
		failures   []string
		ok, passed bool
		msg        string
	}{
		{"unlisted pass", ScenarioCancel, nil, true, true, ""},
		{"unlisted failure", ScenarioCancel, []string{"two cancels"}, false, false, "two cancels"},
		{"intermittent failure", ScenarioResume, []string{"did not continue"}, true, false, "known intermittent failure (" + b.path + "): load refused at times\ndid not continue"},
		{"intermittent pass", ScenarioResume, nil, true, true, "resume, which fails only some runs (" + b.path + "), passed this one"},
		{"listed failure", ScenarioKilledMidCommand, []string{"cat outlived it"}, true, false, "known failure (" + b.path + "): escapes the group\ncat outlived it"},
		{"listed pass: stale", ScenarioKilledMidCommand, nil, false, true, "killed-mid-command passes now: remove it from " + b.path + " (escapes the group)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, passed := b.verdict(tc.id, tc.failures)
			assert.Equal(t, tc.ok, ok, "the test's verdict")
			assert.Equal(t, tc.passed, passed, "the scenario's")
			assert.Equal(t, tc.msg, b.message(tc.id, tc.failures))
		})
	}
}

// writeBaseline writes content as a baseline file and returns its path.
func writeBaseline(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenarios.baseline")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}
