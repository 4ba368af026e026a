//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/npmtest"
)

// TestE2E_MS10_GeminiCLITurnReportsTheFiguresTheCLIRecorded runs acprun on
// the real Gemini CLI (pinned in conformance/runtimes/gemini-cli) against
// the fake Gemini API: the --json stream carries a token_usage line with
// the run-cumulative figure and model, before the turn's terminal line.
func TestE2E_MS10_GeminiCLITurnReportsTheFiguresTheCLIRecorded(t *testing.T) {
	gemini := npmtest.Bin(t, "gemini-cli", "gemini")
	router := fakemodel.GeminiUsage{Prompt: 50, Output: 7}
	main := fakemodel.GeminiUsage{Prompt: 100, Output: 10, Cached: 5, Thoughts: 3}
	api, err := fakemodel.NewGeminiAPI(func(r fakemodel.GeminiRequest) fakemodel.GeminiReply {
		if r.WantsJSON() {
			return fakemodel.GeminiReply{Text: fakemodel.GeminiRouterAnswer, Usage: router}
		}
		return fakemodel.GeminiReply{Text: "Answer from the fake model.", Usage: main}
	})
	require.NoError(t, err)
	defer api.Close()

	home := t.TempDir()
	// The CLI's start is CPU-bound; a loaded machine needs the room.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "acprun"), "--json", "--read-timeout", "90s", "--command", gemini+" --acp", "say hello")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "GEMINI_CLI_HOME="+home,
		"GOOGLE_GEMINI_BASE_URL="+api.URL(), "GEMINI_API_KEY=fake-key")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())

	var in, out, cached int64
	model := ""
	for _, r := range api.Requests() {
		g := main
		if r.WantsJSON() {
			g = router
		} else {
			model = r.Model
		}
		in, out, cached = in+g.Prompt, out+g.Output+g.Thoughts, cached+g.Cached
	}
	lines := clitest.JSONLines(t, stdout.Bytes())
	var usage map[string]any
	for i, l := range lines {
		if l["type"] == "token_usage" {
			usage = l
			assert.Equal(t, "turn_completed", lines[i+1]["type"], "token_usage comes right before the terminal event")
		}
	}
	require.NotNil(t, usage, "a token_usage line")
	assert.Equal(t, map[string]any{"input": float64(in), "output": float64(out), "total": float64(in + out), "cache_read": float64(cached)}, usage["usage"])
	assert.Equal(t, model, usage["model"])
	assert.Equal(t, "completed", lines[len(lines)-1]["exit_reason"])
}
