package realclients_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
)

// TestReplay_AFailedClientCheck: the transcript `acpcheck client
// --transcripts` writes of a failed check, in the format acprun --record
// writes, is an agent that `acprun replay` plays back: the same client,
// run against the replay instead of acpcheck's scenario agent, fails the
// same way — no grader needed to reproduce it.
func TestReplay_AFailedClientCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check) leaves out the real clients")
	}
	defect := []string{"--fail-unknown-update"}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	grade := exec.CommandContext(ctx, acpcheck, append(append([]string{"client", "--timeout", "20s", "--exit-bound", "10s",
		"--only", "update.unknown-variant", "--transcripts", dir, "--", refclient}, defect...), "--", check.AgentPlaceholder)...)
	grade.Dir = t.TempDir()
	out, err := grade.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, check.ExitFailed, exit.ExitCode(), "%s", out)
	file := filepath.Join(dir, "update.unknown-variant.jsonl")
	require.FileExists(t, file)

	cmd := exec.CommandContext(ctx, refclient, append(defect, "--", acprun, "replay", file)...)
	cmd.Dir = t.TempDir()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.ErrorAs(t, err, &exit, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr.String(), "refclient: aborting: an update of a kind this client does not know")
	assert.Contains(t, stdout.String(), "agent: acpcheck-", "the replay played the scenario agent's chunk before the unknown update")
}
