//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/adapter/internal/sshtest"
)

func TestE2E_SSH2_RunOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	t.Setenv("ACPKIT_E2E_TOKEN", "carried")
	r := acprun(t, "--json", "--ssh-host", srv.Host, "--ssh-pass-env", "ACPKIT_E2E_TOKEN",
		"--command", refagent(), "first", "second")
	require.Equal(t, 0, r.status, r.stderr)
	lines := clitest.JSONLines(t, r.stdout)
	require.NotEmpty(t, lines)
	assert.Equal(t, "completed", lines[len(lines)-1]["exit_reason"])
	assert.EqualValues(t, 2, lines[len(lines)-1]["turns"])
	assert.Contains(t, string(r.stdout), "declared capability gap in: tool servers", "CAP-2 over SSH")
	assertGone(t, r.stdout)
	matches, _ := filepath.Glob(filepath.Join(srv.Dir, "argv.*"))
	assert.Len(t, matches, 1, "one ssh invocation for the whole session")
}
