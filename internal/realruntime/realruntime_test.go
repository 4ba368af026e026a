//go:build linux

package realruntime

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/internal/fakemodel"
)

func TestMain(m *testing.M) {
	TapMain()
	goleak.VerifyTestMain(m)
}

func TestTapCopiesStdinAndKeepsTheExitStatus(t *testing.T) {
	file := filepath.Join(t.TempDir(), "wire")
	cmd := exec.Command(os.Args[0], "/bin/sh", "-c", "cat; exit 3")
	cmd.Env = append(os.Environ(), tapVar+"="+file)
	cmd.Stdin = strings.NewReader(`{"method":"session/cancel"}` + "\n" + `{"method":"session/prompt"}` + "\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	exit, ok := err.(*exec.ExitError)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 3, exit.ExitCode())
	assert.Equal(t, 2, strings.Count(out.String(), "\n"), "the runtime read its stdin")
	assert.Equal(t, 1, CountMethod(t, file, "session/cancel"))
	assert.Equal(t, 1, CountMethod(t, file, "session/prompt"))
}

func TestSurvivorsFindTheMarkedTree(t *testing.T) {
	r := Runtime{Spec: Spec{Kind: "test"}, Mark: newMark()}
	cmd := exec.Command("/bin/sh", "-c", "cat >/dev/null") // lives until stdin closes
	cmd.Env = append(os.Environ(), markVar+"="+r.Mark)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	assert.Contains(t, r.Survivors(), cmd.Process.Pid)
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	assert.Empty(t, r.Survivors())
	r.AssertGone(t, time.Second)
}

func TestCommandCarriesTheEnvironment(t *testing.T) {
	fake := fakemodel.Start(t, nil)
	for _, spec := range Specs {
		r := Start(t, spec.Kind, fake)
		argv := r.Argv()
		assert.Equal(t, "/usr/bin/env", argv[0])
		assert.Equal(t, append([]string{r.Path}, spec.Args...), argv[len(argv)-1-len(spec.Args):])
		assert.Equal(t, spec.Bin, filepath.Base(r.Path))
		assert.Equal(t, strings.Join(argv, " "), r.Command())
		for _, kv := range r.Env {
			assert.NotContains(t, kv, " ", "the command line is split on white space")
		}
		assert.Contains(t, r.Env, "HOME="+r.Home)
		assert.Contains(t, r.Env, "HTTPS_PROXY="+fake.URL)
		assert.Contains(t, r.Env, "NO_PROXY=127.0.0.1,localhost")
		assert.True(t, slices.ContainsFunc(r.Env, func(kv string) bool { return strings.HasPrefix(kv, markVar+"=") }))
	}
}

// Most runtimes run a native binary that npm brings as an optional
// dependency for the platform (codex-acp through @openai/codex,
// claude-agent-acp through @anthropic-ai/claude-agent-sdk, Copilot CLI,
// OpenCode and Cline their own); npm ci must have installed it.
func TestNativeBinariesInstalled(t *testing.T) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		t.Skipf("the runtimes ship no linux binary for %s", runtime.GOARCH)
	}
	fake := fakemodel.Start(t, nil)
	for kind, pattern := range map[Kind]string{
		CodexACP:       filepath.Join("@openai", "codex-linux-"+arch, "vendor", "*", "bin", "codex"),
		ClaudeAgentACP: filepath.Join("@anthropic-ai", "claude-agent-sdk-linux-"+arch, "claude"),
		Copilot:        filepath.Join("@github", "copilot-linux-"+arch, "copilot"),
		OpenCode:       filepath.Join("opencode-linux-"+arch, "bin", "opencode"),
		Cline:          filepath.Join("@cline", "cli-linux-"+arch, "bin", "cline"),
	} {
		r := Start(t, kind, fake)
		modules := filepath.Dir(filepath.Dir(r.Path))
		bins, err := filepath.Glob(filepath.Join(modules, pattern))
		require.NoError(t, err)
		require.Len(t, bins, 1, "%s: the optional dependency %s is installed", kind, pattern)
		fi, err := os.Stat(bins[0])
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&0o111, "%s is executable", bins[0])
	}
}
