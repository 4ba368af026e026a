//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	referenceagent "acpkit.dev/conformance/refagent"
)

// invocation is one acprun process with its stdin and workspace chosen.
type invocation struct {
	args  []string
	stdin string
	dir   string // the workspace; a fresh one when empty
}

// do runs acprun to completion in its own session, so it has no
// controlling terminal (--permissions ask then has none to ask at).
func (r invocation) do(t *testing.T) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "acprun"), r.args...)
	cmd.Dir = r.dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Stdin = strings.NewReader(r.stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("acprun: %v", err)
	}
	return result{status: cmd.ProcessState.ExitCode(), stdout: stdout.Bytes(), stderr: stderr.String()}
}

// messages are the non-empty notification messages of --json output.
func messages(t *testing.T, out []byte) []string {
	var ms []string
	for _, l := range clitest.JSONLines(t, out) {
		if m, _ := l["message"].(string); l["type"] == "notification" && m != "" {
			ms = append(ms, m)
		}
	}
	return ms
}

func TestE2E_PM11_PoliciesDecideWhatTheRuntimeMayDo(t *testing.T) {
	note := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, referenceagent.WriteFile))
		return err == nil
	}
	for _, tc := range []struct {
		policy  []string
		prompt  string
		written bool
		decided string
	}{
		{nil, "write", false, "refused a permission request because this run is unattended and no one can approve it"},
		{[]string{"--permissions", "refuse"}, "write", false, "refused a permission request because this run is unattended and no one can approve it"},
		{[]string{"--permissions", "approve-all"}, "write", true, `approved a permission request: selected "Allow" (allow_once) for edit "Write refagent-note.txt": --permissions approve-all`},
		{[]string{"--permissions", "approve-reads"}, "write", false, "refused a permission request: --permissions approve-reads approves read, search, fetch and think only, not edit"},
		{[]string{"--permissions", "ask"}, "write", false, "refused a permission request: --permissions ask found no terminal to ask at"},
	} {
		dir := t.TempDir()
		args := append(append([]string{"--json"}, tc.policy...), tc.prompt)
		r := invocation{args: args, dir: dir}.do(t)
		require.Equal(t, 0, r.status, "%v: %s", tc.policy, r.stderr)
		assert.Equal(t, tc.written, note(dir), "%v: the write happened only when approved", tc.policy)
		assert.Contains(t, messages(t, r.stdout), tc.decided, "%v: the decision is an event in --json", tc.policy)
	}
	r := invocation{args: []string{"--json", "--permissions", "approve-reads", "permission=read"}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	assert.Contains(t, messages(t, r.stdout), "permission outcome: selected allow", "a read is approved")
}

func TestE2E_AU5_AuthMethod(t *testing.T) {
	agent := refagent("--auth-methods", "api-key,oauth", "--require-auth")
	r := invocation{args: []string{"--json", "--command", agent, "hello"}}.do(t)
	assert.Equal(t, 3, r.status, "without it the runtime refuses the session (AU-1: never by default)")
	assert.Equal(t, "credential_unverified", last(t, r.stdout)["error_kind"])

	r = invocation{args: []string{"--json", "--auth-method", "oauth", "--command", agent, "hello"}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	assert.Equal(t, "completed", last(t, r.stdout)["exit_reason"])

	r = invocation{args: []string{"--json", "--auth-method", "password", "--command", agent, "hello"}}.do(t)
	assert.Equal(t, 2, r.status)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, `acprun: --auth-method "password": the runtime advertises api-key, oauth`)

	r = invocation{args: []string{"--json", "--auth-method", "api-key", "--command", refagent("--auth-methods", "api-key", "--fail-authenticate", "-32000"), "hello"}}.do(t)
	assert.Equal(t, 3, r.status)
	res := last(t, r.stdout)
	assert.Equal(t, "credential_unverified", res["error_kind"])
	assert.Equal(t, `the agent runtime refused to authenticate with "api-key": authentication required (code -32000)`, res["message"])
}

func TestE2E_DI11_TheRuntimeStoppedAtARefusal(t *testing.T) {
	r := invocation{args: []string{"--command", refagent("--stop-at-refusal"), "write"}}.do(t)
	require.Equal(t, 0, r.status, "the turn completed (DI-2): %s", r.stderr)
	assert.Contains(t, string(r.stdout), "  note      the runtime stopped at a refused permission; nothing ran after it\n")

	r = invocation{args: []string{"--json", "--command", refagent("--stop-at-refusal"), "write"}}.do(t)
	res := last(t, r.stdout)
	assert.EqualValues(t, 1, res["permissions_refused"])
	assert.Equal(t, true, res["stopped_at_refusal"])

	r = invocation{args: []string{"write"}}.do(t)
	require.Equal(t, 0, r.status)
	assert.NotContains(t, string(r.stdout), "stopped at a refused permission", "the reference agent carries on after a refusal")
}

func TestE2E_DI11_PromptErrorDataReachesTheOutput(t *testing.T) {
	r := invocation{args: []string{"--json", "error=-32000 error-data"}}.do(t)
	assert.Equal(t, 4, r.status)
	res := last(t, r.stdout)
	assert.Equal(t, "session/prompt error -32000: authentication required", res["message"], "DI-3's message")
	assert.Contains(t, res["detail"], `{"details":"-32000 Incorrect API key provided"}`)

	r = invocation{args: []string{"error=-32000 error-data"}}.do(t)
	assert.Contains(t, string(r.stdout), `turn 1 failed in`)
	assert.Contains(t, string(r.stdout), `response_error: session/prompt error -32000: authentication required: {"details":"-32000 Incorrect API key provided"}`)
}
