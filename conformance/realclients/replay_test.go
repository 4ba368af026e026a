package realclients_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
)

// TestReplay_AFailedClientCheck: the transcript of a failed client check,
// in the format acprun --record writes, is an agent that `acprun replay`
// plays back: the same client, run against the replay instead of
// acpcheck's scenario agent, fails the same way — no grader needed to
// reproduce it.
func TestReplay_AFailedClientCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check) leaves out the real clients")
	}
	defect := []string{"--fail-unknown-update"}
	rep, err := check.GradeClient(context.Background(), check.ClientStandard(), check.ClientConfig{
		Argv:            append(append([]string{refclient}, defect...), "--", check.AgentPlaceholder),
		AgentProgram:    acpcheck,
		Timeout:         20 * time.Second,
		ExitBound:       10 * time.Second,
		Only:            []string{"update.unknown-variant"},
		KeepTranscripts: true,
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	res := rep.Results[0]
	require.Equal(t, check.StatusFail, res.Status, res.Reason)
	file := filepath.Join(t.TempDir(), res.ID+".jsonl")
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, check.WriteTranscriptFile(f, res, "realclients test"))
	require.NoError(t, f.Close())

	cmd := exec.Command(refclient, append(defect, "--", acprun, "replay", file)...)
	cmd.Dir = t.TempDir()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr.String(), "refclient: aborting: an update of a kind this client does not know")
	assert.Contains(t, stdout.String(), "agent: acpcheck-", "the replay played the scenario agent's chunk before the unknown update")
}
