package refagent

import (
	"bytes"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refagentCLI runs the refagent binary with args and returns its exit
// status, stdout and stderr.
func refagentCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func TestCLI_HelpAndVersionExitZeroOnStdout(t *testing.T) {
	code, out, _ := refagentCLI(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "usage: refagent [flags]")
	assert.Contains(t, out, "--load-session")
	assert.NotContains(t, out, "--be-descendant", "the internal flag is not offered")

	code, out, _ = refagentCLI(t, "--version")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^refagent \S+ .*\(go1\.[0-9.]+ \w+/\w+\)\n$`, out)
}

func TestCLI_AMistypedFlagGetsADidYouMean(t *testing.T) {
	code, out, errOut := refagentCLI(t, "--slow-fro", "1s")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "refagent: unknown flag --slow-fro (did you mean --slow-for?)\nusage: refagent [flags]\nRun 'refagent --help' for the flags.\n", errOut)
}

func TestParseFlags_KeepsEveryFlagsNameAndMeaning(t *testing.T) {
	o, err := ParseFlags([]string{"-load-session", "--slow-for", "2", "-descendant-for=3s", "--words=text"}, nil)
	require.NoError(t, err, "one-dash long flags, as the standard flag package took them")
	assert.True(t, o.LoadSession)
	assert.Equal(t, 2*time.Second, o.SlowFor, "a bare number is seconds")
	assert.Equal(t, 3*time.Second, o.DescendantFor)
	assert.Equal(t, "text", o.Words)
}
