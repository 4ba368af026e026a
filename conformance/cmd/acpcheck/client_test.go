package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/transcript"
)

func acpcheckClient(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	base := []string{"client", "--timeout", "10s", "--exit-bound", "3s"}
	code := run(context.Background(), append(base, args...), &out, &errb, false)
	return code, out.String(), errb.String()
}

func TestAcpcheckClient_GradesTheReferenceClient(t *testing.T) {
	code, out, stderr := acpcheckClient(t, "--only", "session.turn,shutdown.waits", "--", refclient, "--", "{agent}")
	assert.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "client: acpkit-refclient 1.0.0")
	assert.Contains(t, out, "2 of 27 checks (--only): 2 pass, 0 fail")
}

// TestAcpcheckClient_FailureWritesTranscriptHTMLAndJSON: a failed check's
// transcript goes to --transcripts in acprun's format, the HTML page
// names the verdict, and --json carries the report.
func TestAcpcheckClient_FailureWritesTranscriptHTMLAndJSON(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	code, out, _ := acpcheckClient(t, "--json", "--only", "update.usage", "--transcripts", filepath.Join(dir, "tr"), "--html", page,
		"--", refclient, "--fail-usage-update", "--", "{agent}")
	assert.Equal(t, check.ExitFailed, code, out)
	var rep check.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, check.RoleClient, rep.Role)
	assert.Equal(t, check.VerdictFailed, rep.Verdict)

	f, err := os.Open(filepath.Join(dir, "tr", "update.usage.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	tr, err := transcript.Read(f)
	require.NoError(t, err)
	assert.Contains(t, tr.Header.Command, "acpcheck-scenario-agent-", "the transcript is the client's view of the scenario agent")
	var sawUsage, sawAbort bool
	for _, e := range tr.Entries {
		line, _ := e.Line()
		sawUsage = sawUsage || e.Kind == transcript.KindRecv && strings.Contains(string(line), `"usage_update"`)
		sawAbort = sawAbort || e.Kind == transcript.KindClientStderr && strings.Contains(string(line), "aborting")
	}
	assert.True(t, sawUsage, "the agent's usage_update, as the client read it")
	assert.True(t, sawAbort, "the client's own stderr")

	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), `<span class="verdict FAILED" id="verdict">FAILED</span>`)
}

func TestAcpcheckClient_UsageErrorsExitTwo(t *testing.T) {
	for name, args := range map[string][]string{
		"no client":      {},
		"no {agent}":     {"--", refclient, "--", "refagent"},
		"unknown check":  {"--only", "nope", "--", refclient, "{agent}"},
		"bad baseline":   {"--baseline", filepath.Join(t.TempDir(), "absent"), "--", refclient, "{agent}"},
		"agent baseline": {"--baseline", writeFile(t, "prompt.cancel  an agent check\n"), "--", refclient, "{agent}"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := acpcheckClient(t, args...)
			assert.Equal(t, 2, code)
			assert.NotEmpty(t, stderr)
		})
	}
}

// TestAcpcheckClient_HelpAndMistypedFlags: the subcommand keeps acpkit's
// command-line conventions (internal/cmdline): --help on stdout with exit
// 0, a did-you-mean for a mistyped flag, and a client's own flags after
// its command left alone.
func TestAcpcheckClient_HelpAndMistypedFlags(t *testing.T) {
	code, out, stderr := acpcheckClient(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "usage: acpcheck client [flags] -- CLIENT-COMMAND [ARGS...]")
	assert.Contains(t, out, "--line-bound BYTES")
	assert.Empty(t, stderr)

	code, out, stderr = acpcheckClient(t, "--basline", "x", "--", refclient, "{agent}")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "acpcheck client: unknown flag --basline (did you mean --baseline?)\n")

	// refclient has no --json: it refuses its command line, and acpcheck,
	// which did not take the flag, prints its table.
	code, out, _ = acpcheckClient(t, "--only", "session.turn", refclient, "--json", "--", "{agent}")
	assert.Equal(t, check.ExitFailed, code, out)
	assert.False(t, strings.HasPrefix(out, "{"), "a table, not JSON:\n%s", out)
	assert.Contains(t, out, "flag provided but not defined: -json")
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestAcpcheckClient_ListNamesEveryClientCheck(t *testing.T) {
	code, out, _ := acpcheckClient(t, "--list")
	assert.Equal(t, 0, code)
	for _, c := range check.ClientStandard().Checks() {
		assert.Contains(t, out, c.ID)
	}
	assert.Contains(t, out, "runs when the client offers clientCapabilities.fs.readTextFile")
}

// TestAcpcheck_HTMLForAnAgent: agent grading writes the same page, the
// agent graded in the right-hand column.
func TestAcpcheck_HTMLForAnAgent(t *testing.T) {
	page := filepath.Join(t.TempDir(), "agent.html")
	code, out, _ := acpcheck(t, "--html", page, "--only", "prompt.cancel", "--command", refagent+" --cancel-stop-reason end_turn")
	assert.Equal(t, check.ExitFailed, code, out)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	for _, want := range []string{
		`<span class="verdict FAILED" id="verdict">FAILED</span>`,
		`acpcheck graded the agent acpkit-refagent 1.0.0`,
		`<details class="exchange fail" id="transcript-prompt.cancel" open>`,
		`agent graded`,
		`session/cancel`,
	} {
		assert.Contains(t, string(html), want)
	}
	assert.NotContains(t, string(html), "<script")
}
