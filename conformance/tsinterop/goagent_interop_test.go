package tsinterop_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildGoAgent compiles ./goagent into dir and returns the binary's path.
func buildGoAgent(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "goagent")
	// go test puts its own GOROOT/bin first on PATH, so this is the same
	// toolchain that built the test.
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "acpkit.dev/conformance/tsinterop/goagent").CombinedOutput()
	require.NoError(t, err, "go build goagent:\n%s", out)
	return bin
}

// TestTSClientGoAgent drives the Go agent (acpsdk's agent side) with the
// TypeScript SDK's client through the whole flow: streamed updates, a
// permission request the client rejects, session/cancel of a running turn
// (SDK-8 from the agent's side) and session/load on a fresh process.
func TestTSClientGoAgent(t *testing.T) {
	peerDir(t) // node present, SDK installed
	agent := buildGoAgent(t, t.TempDir())
	s, err, stderr := runTSClient(t, agent)
	require.NoError(t, err, "client.mjs failed; stderr:\n%s", stderr)
	requireFlow(t, s, "acpkit-tsinterop-goagent")
}
