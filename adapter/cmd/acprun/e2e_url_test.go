//go:build unix

package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/internal/acpnettest"
)

// TestE2E_LT3_SP9_URLDrivesAServedRuntime: acprun --url runs a session
// through the adapter against the reference agent served over each
// transport ([acpkit] adapter.WithDialer): the turn completes, no pid is
// reported, and the one served line says what does not apply.
func TestE2E_LT3_SP9_URLDrivesAServedRuntime(t *testing.T) {
	for _, transport := range []string{"http", "ws", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			url := acpnettest.Run(t, exec.Command(filepath.Join(bin, "acprun"), "refagent", "--listen", "127.0.0.1:0", "--transport", transport))
			r := acprun(t, "--json", "--url", url, "text")
			require.Equal(t, 0, r.status, r.stderr)
			lines := clitest.JSONLines(t, r.stdout)
			require.NotEmpty(t, lines)
			served := 0
			for _, l := range lines {
				if l["type"] == "served" {
					served++
					assert.Equal(t, url, l["url"])
					assert.Contains(t, l["message"], "spawning, signalling and a process's teardown do not apply")
				}
				if pid, ok := l["agent_pid"]; ok {
					assert.Equal(t, "", pid, "a served runtime has no pid")
				}
			}
			assert.Equal(t, 1, served, "said once")
			assert.Equal(t, "completed", last(t, r.stdout)["exit_reason"])

			r = acprun(t, "--url", url, "text")
			require.Equal(t, 0, r.status, r.stderr)
			assert.Contains(t, string(r.stdout), "(served)")
		})
	}
}

func TestE2E_URLTakesNoCommand(t *testing.T) {
	r := acprun(t, "--url", "http://127.0.0.1:1/acp", "--command", refagent(), "text")
	assert.Equal(t, 2, r.status)
	assert.Contains(t, r.stderr, "--url drives a runtime served elsewhere")
}
