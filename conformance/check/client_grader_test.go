package check_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
)

// refclient is the reference client and acpcheckBin acpcheck itself (the
// scenario agent), both built once in TestMain.
var refclient, acpcheckBin string

// testLineBound is the line bound the reference client is run with, so
// the oversize check sends a line of a megabyte, not of ten.
const testLineBound = 1 << 20

// gradeClient grades the reference client run with flags; only limits the
// checks.
func gradeClient(t *testing.T, only []string, flags ...string) check.Report {
	t.Helper()
	argv := append([]string{refclient, "--max-line", "1048576"}, flags...)
	rep, err := check.GradeClient(context.Background(), check.ClientStandard(), check.ClientConfig{
		Argv:         append(argv, "--", check.AgentPlaceholder),
		AgentProgram: acpcheckBin,
		Timeout:      testTimeout,
		ExitBound:    testExitBound,
		LineBound:    testLineBound,
		Only:         only,
	})
	require.NoError(t, err)
	return rep
}

// correctClient is the reference client with every behaviour a check
// needs to run switched on: fs served, a session to continue.
var correctClient = []string{"--fs", "--resume", "acpcheck-saved-session"}

func TestClientStandard_ReferenceClientPassesEveryCheck(t *testing.T) {
	rep := gradeClient(t, nil, correctClient...)
	require.Len(t, rep.Results, len(check.ClientStandard().Checks()))
	for _, r := range rep.Results {
		assert.Equal(t, check.StatusPass, r.Status, "%s: %s\n%v", r.ID, r.Reason, r.Transcript)
	}
	assert.Equal(t, check.VerdictOK, rep.Verdict)
	assert.Equal(t, check.RoleClient, rep.Role)
	assert.Equal(t, "acpkit-refclient 1.0.0", rep.PeerName())
}

// TestClientStandard_HoldingClientPassesTheCancelChecks: a client that
// holds permission requests open (as one asking a person does) meets the
// cancel with a request pending, and answers it cancelled.
func TestClientStandard_HoldingClientPassesTheCancelChecks(t *testing.T) {
	rep := gradeClient(t, []string{"permission.cancelled", "cancel.session-cancel"}, "--hold-permissions")
	for _, r := range rep.Results {
		assert.Equal(t, check.StatusPass, r.Status, "%s: %s\n%v", r.ID, r.Reason, r.Transcript)
	}
}

// clientBreakers maps every client check to the reference-client flags
// that break exactly its requirement.
var clientBreakers = map[string][]string{
	"session.turn":                      {"--no-wait-prompt"},
	"handshake.initialize":              {"--skip-initialize"},
	"handshake.client-info":             {"--no-client-info"},
	"handshake.version-mismatch":        {"--ignore-version"},
	"handshake.unknown-capabilities":    {"--strict-capabilities"},
	"session.cwd-absolute":              {"--relative-cwd"},
	"client.unadvertised-methods":       {"--serve-unadvertised"},
	"fs.read":                           {"--fs", "--fs-read-wrong"},
	"fs.write":                          {"--fs", "--fs-write-ignore"},
	"fs.relative-path":                  {"--fs", "--fs-relative"},
	"permission.answered":               {"--ignore-permissions"},
	"permission.cancelled":              {"--permission-after-cancel-selected"},
	"cancel.session-cancel":             {"--cancel-request-only"},
	"rpc.unknown-request":               {"--unknown-request-code", "-32603"},
	"rpc.unknown-notification":          {"--answer-notifications"},
	"update.unknown-variant":            {"--fail-unknown-update"},
	"update.malformed":                  {"--fail-malformed-update"},
	"update.usage":                      {"--fail-usage-update"},
	"update.foreign-session":            {"--fail-foreign-update"},
	"update.before-session":             {"--fail-early-update"},
	"update.after-response":             {"--fail-late-update"},
	"wire.non-json":                     {"--die-on-garbage"},
	"wire.oversize-line":                {"--die-on-oversize"},
	"shutdown.stdin":                    {"--kill-agent"},
	"shutdown.waits":                    {"--no-wait-agent"},
	"session.continuation-unadvertised": {"--resume", "acpcheck-saved-session", "--force-load"},
	"session.continuation-once":         {"--resume", "acpcheck-saved-session", "--load-and-resume"},
}

// moreClientBreakers are second ways to break a check.
var moreClientBreakers = []struct {
	id    string
	flags []string
}{
	{"handshake.initialize", []string{"--protocol-version", "2"}},
	{"cancel.session-cancel", []string{"--exit-on-cancel"}},
}

func TestClientStandard_EveryCheckHasABreaker(t *testing.T) {
	for _, c := range check.ClientStandard().Checks() {
		assert.Contains(t, clientBreakers, c.ID, "no reference-client flag proves %s can fail", c.ID)
	}
	for id := range clientBreakers {
		assert.True(t, check.ClientStandard().Has(id), "breaker for unknown check %s", id)
	}
}

// TestClientStandard_EachBreakerFailsItsCheck: each defect flag fails the
// check that pins its requirement, and the same check passes against the
// correct client (TestClientStandard_ReferenceClientPassesEveryCheck).
func TestClientStandard_EachBreakerFailsItsCheck(t *testing.T) {
	type run struct {
		id    string
		flags []string
	}
	var runs []run
	for _, c := range check.ClientStandard().Checks() {
		runs = append(runs, run{c.ID, clientBreakers[c.ID]})
	}
	for _, m := range moreClientBreakers {
		runs = append(runs, run{m.id, m.flags})
	}
	for _, b := range runs {
		t.Run(b.id+" "+b.flags[0], func(t *testing.T) {
			t.Parallel()
			rep := gradeClient(t, []string{b.id}, b.flags...)
			require.Len(t, rep.Results, 1)
			r := rep.Results[0]
			assert.Equal(t, check.StatusFail, r.Status, "%s with %v: %s", b.id, b.flags, r.Reason)
			assert.NotEmpty(t, r.Transcript, "a failure keeps its transcript")
		})
	}
}

// TestClientStandard_OutputReadToItsEndAfterExit: a client's last output
// can reach acpcheck after the client has exited (here a process the
// client's shell left holds its stdout and passes all but the first line
// on a second late). What the client showed is judged once its output is
// read to the end: before, update.usage failed such a client ("showed the
// text before but not after"), as it once failed coder's example client
// under load.
func TestClientStandard_OutputReadToItsEndAfterExit(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("needs bash's process substitution")
	}
	late := `exec > >(IFS= read -r first; printf '%s\n' "$first"; sleep 1; cat); exec "$0" --max-line 1048576 -- "$1"`
	rep, err := check.GradeClient(context.Background(), check.ClientStandard(), check.ClientConfig{
		Argv:         []string{bash, "-c", late, refclient, check.AgentPlaceholder},
		AgentProgram: acpcheckBin,
		Timeout:      testTimeout,
		ExitBound:    testExitBound,
		LineBound:    testLineBound,
		Only:         []string{"update.usage"},
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.Equal(t, check.StatusPass, r.Status, "%s\n%v", r.Reason, r.Transcript)
}
