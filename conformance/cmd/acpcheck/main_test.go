package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/testbin"
)

var refagent string

func TestMain(m *testing.M) { testbin.Main(m, &refagent) }

func acpcheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	base := []string{"--cwd", t.TempDir(), "--timeout", "10s", "--exit-bound", "3s"}
	code := run(context.Background(), append(base, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAcpcheck_ReferenceAgentExitsZero(t *testing.T) {
	code, out, _ := acpcheck(t, "--command", refagent+" --load-session --resume --close --delete")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "19 checks: 19 pass, 0 fail")
}

func TestAcpcheck_MandatoryFailureExitsOne(t *testing.T) {
	code, out, _ := acpcheck(t, "--command", refagent+" --cancel-stop-reason end_turn", "--only", "prompt.cancel")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "--- prompt.cancel (fail)")
	assert.Contains(t, out, `"method":"session/cancel"`, "the failure shows the wire transcript")
}

func TestAcpcheck_AdvisoryFailureExitsZero(t *testing.T) {
	code, out, _ := acpcheck(t, "--command", refagent+" --no-agent-info", "--only", "initialize.agent-info")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "initialize.agent-info  advisory  fail")
}

func TestAcpcheck_ListNamesEveryCheck(t *testing.T) {
	code, out, _ := acpcheck(t, "--list")
	assert.Equal(t, 0, code)
	for _, c := range check.Standard().Checks() {
		assert.Contains(t, out, c.ID)
	}
}

func TestAcpcheck_VerboseLogsEachCheck(t *testing.T) {
	code, _, stderr := acpcheck(t, "-v", "--only", "session.new", "--command", refagent)
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "id=session.new status=pass")
}

func TestAcpcheck_JSONReport(t *testing.T) {
	code, out, _ := acpcheck(t, "--json", "--command", refagent+" --late-updates",
		"--only", "prompt.updates-before-response,session.new")
	assert.Equal(t, 1, code)
	var rep check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.False(t, rep.OK)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, "session.new", rep.Results[0].ID, "registry order, not --only order")
	assert.Equal(t, check.StatusPass, rep.Results[0].Status)
	assert.Equal(t, check.StatusFail, rep.Results[1].Status)
	assert.NotEmpty(t, rep.Results[1].Transcript)
}

func TestAcpcheck_BaselineKnownFailureAndStaleEntry(t *testing.T) {
	dir := t.TempDir()
	baseline := filepath.Join(dir, "known")
	require.NoError(t, os.WriteFile(baseline, []byte("prompt.cancel  answers end_turn after a cancel\n"), 0o600))

	code, out, _ := acpcheck(t, "--baseline", baseline, "--only", "prompt.cancel",
		"--command", refagent+" --cancel-stop-reason end_turn")
	assert.Equal(t, 0, code, "a known failure does not fail the run:\n%s", out)
	assert.Contains(t, out, "fail (known)")

	code, out, _ = acpcheck(t, "--baseline", baseline, "--only", "prompt.cancel", "--command", refagent)
	assert.Equal(t, 1, code, "a listed failure that now passes is reported:\n%s", out)
	assert.Contains(t, out, "pass (fixed: drop it from the baseline)")
}

func TestAcpcheck_UsageErrorsExitTwo(t *testing.T) {
	for name, args := range map[string][]string{
		"no command":      {},
		"unknown check":   {"--command", refagent, "--only", "nope"},
		"missing program": {"--command", filepath.Join(t.TempDir(), "absent")},
		"bad baseline":    {"--command", refagent, "--baseline", filepath.Join(t.TempDir(), "absent")},
		"bad flag":        {"--frobnicate"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := acpcheck(t, args...)
			assert.Equal(t, 2, code)
			assert.NotEmpty(t, stderr)
		})
	}
}
