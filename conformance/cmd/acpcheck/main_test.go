package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/scenario"
	"acpkit.dev/conformance/internal/testbin"
	"acpkit.dev/internal/acpnettest"
)

var refagent, refclient string

func TestMain(m *testing.M) {
	// acpcheck client links its own executable as the scenario agent: in
	// these tests that is this test binary, which then plays the part.
	if socket, token, ok := scenario.FromLink(os.Args[0]); ok {
		os.Exit(scenario.Main([]string{socket, token}, os.Stdin, os.Stdout, os.Stderr))
	}
	testbin.MainBuilding(m, map[string]*string{testbin.RefAgent: &refagent, testbin.RefClient: &refclient})
}

func acpcheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	base := []string{"--cwd", t.TempDir(), "--timeout", "10s", "--exit-bound", "3s"}
	code := run(context.Background(), append(base, args...), &out, &errb, false)
	return code, out.String(), errb.String()
}

// allCaps makes the reference agent advertise every optional capability.
const allCaps = " --load-session --resume --close --delete --list --modes --config-options --auth-methods key --prompt-image"

func TestAcpcheck_ReferenceAgentExitsZero(t *testing.T) {
	code, out, _ := acpcheck(t, "--auth-method", "key", "--command", refagent+allCaps)
	assert.Equal(t, 0, code, out)
	n := len(check.Standard().Checks())
	assert.Contains(t, out, fmt.Sprintf("%d checks: %d pass, 0 fail", n, n))
	assert.Contains(t, out, "— OK (acpkit-refagent 1.0.0)")
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

// TestAcpcheck_LoggedOutAgentIsIncomplete: a logged-out agent is not a
// failure, but not OK either: INCOMPLETE, exit status 3, with the
// mandatory checks not graded and why.
func TestAcpcheck_LoggedOutAgentIsIncomplete(t *testing.T) {
	code, out, _ := acpcheck(t, "--command", refagent+" --fail-new-session -32000")
	assert.Equal(t, check.ExitIncomplete, code, out)
	assert.Regexp(t, `(?m)^session\.new\s+mandatory\s+needs a credential\s+session/new answered error -32000`, out)
	assert.Regexp(t, `(?m)^prompt\.cancel\s+mandatory\s+needs a credential\s+not launched: needs a credential, as session.new found$`, out)
	assert.Regexp(t, `(?m)^not graded: \d+ of \d+ mandatory checks$`, out)
	assert.Regexp(t, `(?m)^  needs a credential \(\d+\): session\.new, .* — session/new answered error -32000`, out)
	assert.Contains(t, out, "— INCOMPLETE (acpkit-refagent 1.0.0)")
	assert.NotContains(t, out, "FAILED")
	assert.NotContains(t, out, "— OK")
}

func TestAcpcheck_NamesTheAgentInTableJSONAndVerdict(t *testing.T) {
	agent := refagent + " --agent-name graded-agent --agent-version 3.1.4"
	code, out, _ := acpcheck(t, "--command", agent, "--only", "session.new")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "agent: graded-agent 3.1.4\n")
	assert.Contains(t, out, "— OK (graded-agent 3.1.4)")

	code, out, stderr := acpcheck(t, "--json", "--command", agent, "--only", "session.new")
	require.Equal(t, 0, code, out)
	var rep check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, check.Peer{Name: "graded-agent", Version: "3.1.4"}, rep.Peer)
	assert.Equal(t, check.VerdictOK, rep.Verdict)
	assert.Contains(t, stderr, "— OK (graded-agent 3.1.4)")
}

func TestAcpcheck_TranscriptsWritesEveryCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wire")
	code, out, _ := acpcheck(t, "--transcripts", dir, "--command", refagent, "--only", "initialize.version,session.new")
	require.Equal(t, 0, code, out)
	for _, id := range []string{"initialize.version", "session.new"} {
		b, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), `{"format":"acprun-transcript","version":1,`), "acprun's transcript format: %.200s", b)
		assert.Contains(t, string(b), `\"method\":\"initialize\"`)
	}
	assert.NotContains(t, out, "--- ", "passing checks still print no transcript")
}

func TestAcpcheck_ProgressLineOnATerminal(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--cwd", t.TempDir(), "--command", refagent, "--only", "initialize.version,session.new"}, &out, &errb, true)
	require.Equal(t, 0, code)
	assert.Contains(t, errb.String(), "check 1 of 2: initialize.version (")
	assert.Contains(t, errb.String(), "check 2 of 2: session.new (")
	assert.True(t, strings.HasSuffix(errb.String(), "\r\x1b[2K"), "the line is cleared before the report")
}

func TestAcpcheck_Version(t *testing.T) {
	code, out, _ := acpcheck(t, "--version")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^acpcheck \S+ \(go`, out)
}

func TestAcpcheck_AuthMethodAuthenticatesBeforeSessions(t *testing.T) {
	agent := refagent + " --auth-methods key --require-auth"
	code, out, _ := acpcheck(t, "--command", agent, "--only", "session.new,auth.method")
	assert.Equal(t, check.ExitIncomplete, code, out)
	assert.Contains(t, out, "name a method with --auth-method")

	code, out, _ = acpcheck(t, "--auth-method", "key", "--command", agent, "--only", "session.new,auth.method")
	assert.Equal(t, 0, code, out)
	assert.Regexp(t, `(?m)^auth\.method\s+capability\s+pass$`, out)
}

// TestAcpcheck_AgentEnvReachesTheAgentMasked: a value set with
// --agent-env reaches the agent (which logs it, as leaky agents do) and
// is masked in the table, the JSON report and the transcripts; the
// reports name the variable only.
func TestAcpcheck_AgentEnvReachesTheAgentMasked(t *testing.T) {
	const secret = "s3cret-value-42"
	dir := filepath.Join(t.TempDir(), "wire")
	agent := refagent + " --log-env ACPCHECK_TEST_TOKEN --cancel-stop-reason end_turn"
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			args := []string{"--agent-env", "ACPCHECK_TEST_TOKEN=" + secret, "--transcripts", dir,
				"--command", agent, "--only", "prompt.cancel"}
			if format == "json" {
				args = append(args, "--json")
			}
			code, out, stderr := acpcheck(t, args...)
			require.Equal(t, 1, code, out)
			assert.NotContains(t, out+stderr, secret)
			assert.Contains(t, out, "value=***", "the agent received the value and logged it")
			if format == "json" {
				var rep check.Report
				require.NoError(t, json.Unmarshal([]byte(out), &rep))
				assert.Equal(t, []string{"ACPCHECK_TEST_TOKEN=***"}, rep.Env)
			} else {
				assert.Contains(t, out, "env: ACPCHECK_TEST_TOKEN=***\n")
			}
			b, err := os.ReadFile(filepath.Join(dir, "prompt.cancel.jsonl"))
			require.NoError(t, err)
			assert.NotContains(t, string(b), secret)
			assert.Contains(t, string(b), "value=***")
		})
	}
}

// TestAcpcheck_AgentEnvByNameKeepsTheValueOffTheCommandLine: --agent-env
// NAME passes acpcheck's own value on; an unset NAME is a usage error.
func TestAcpcheck_AgentEnvByNameKeepsTheValueOffTheCommandLine(t *testing.T) {
	const secret = "from-acpchecks-own-env"
	t.Setenv("ACPCHECK_TEST_TOKEN", secret)
	agent := refagent + " --log-env ACPCHECK_TEST_TOKEN --cancel-stop-reason end_turn"
	code, out, _ := acpcheck(t, "--agent-env", "ACPCHECK_TEST_TOKEN", "--command", agent, "--only", "prompt.cancel")
	require.Equal(t, 1, code, out)
	assert.NotContains(t, out, secret)
	assert.Contains(t, out, "name=ACPCHECK_TEST_TOKEN value=***")

	code, _, stderr := acpcheck(t, "--agent-env", "ACPCHECK_TEST_UNSET_NAME", "--command", agent)
	assert.Equal(t, check.ExitUsage, code)
	assert.Contains(t, stderr, "ACPCHECK_TEST_UNSET_NAME is not set")
}

func TestAcpcheck_HelpExitsZeroOnStdout(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--help"}, &out, &errb, false)
	assert.Equal(t, 0, code)
	assert.Contains(t, out.String(), "usage: acpcheck")
	assert.Contains(t, out.String(), "--transcripts DIR")
	assert.Empty(t, errb.String())
}

func TestAcpcheck_AMistypedFlagGetsADidYouMean(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--comand", "x"}, &out, &errb, false)
	assert.Equal(t, 2, code)
	assert.Empty(t, out.String())
	assert.Contains(t, errb.String(), "acpcheck: unknown flag --comand (did you mean --command?)\n")
	assert.Contains(t, errb.String(), "Run 'acpcheck --help' for the flags.\n")

	code = run(context.Background(), []string{"--timeout", "soon", "--command", "x"}, &out, &errb, false)
	assert.Equal(t, 2, code)
	assert.Contains(t, errb.String(), `"soon" is not a duration: use a unit, e.g. 5s`)
}

// TestTR13_GradesAnAgentServedAtAURL runs acpcheck --url against the
// reference agent served over WebSocket: it grades every check that needs
// no process and says why it skips the others.
func TestTR13_GradesAnAgentServedAtAURL(t *testing.T) {
	p := acpnettest.Run(t, exec.Command(refagent, "--listen", "127.0.0.1:0", "--transport", "ws", "--load-session", "--resume", "--close", "--delete"))
	// Served at a URL the agent has no process to grade: process.stdin-close
	// (mandatory) is skipped, saying why; it cannot apply, so it is not a
	// mandatory check left ungraded and the verdict is OK.
	code, out, _ := acpcheck(t, "--url", p)
	assert.Equal(t, check.ExitOK, code, out)
	assert.Regexp(t, `\d+ checks: \d+ pass, 0 fail .*; (\d+) of (\d+) mandatory graded — OK`, out)
	m := regexp.MustCompile(`(\d+) of (\d+) mandatory graded`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Equal(t, m[1], m[2], "every mandatory check that can apply was graded")
	assert.Regexp(t, `(?m)^process\.stdin-close\s+mandatory\s+skip\s+needs the agent's process`, out)

	code, _, stderr := acpcheck(t, "--url", p, "--command", refagent)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not both")
}
