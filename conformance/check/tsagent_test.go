package check_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/npmtest"
)

// TestStandard_TypeScriptSDKAgentConforms grades a third-party peer: the
// agent written with the official TypeScript SDK in conformance/tsinterop.
// It passes every mandatory check and every capability it advertises; the
// capabilities it does not advertise are skipped, and an advisory failure
// is logged (it serves image blocks it does not advertise).
func TestStandard_TypeScriptSDKAgentConforms(t *testing.T) {
	t.Parallel()
	node := npmtest.Node(t)
	dir, err := filepath.Abs(filepath.Join("..", "tsinterop"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (run `make deps`): %v", err)
	}
	results, err := check.Run(context.Background(), check.Standard(), check.Config{
		Target:    check.Target{Argv: []string{node, filepath.Join(dir, "agent.mjs")}, Dir: t.TempDir()},
		Timeout:   10 * time.Second,
		ExitBound: 5 * time.Second,
	})
	require.NoError(t, err)
	for _, r := range results {
		if r.Tier == check.TierAdvisory && r.Status == check.StatusFail {
			t.Logf("advisory %s fails: %s", r.ID, r.Reason)
			continue
		}
		assert.Contains(t, []check.Status{check.StatusPass, check.StatusSkip}, r.Status, "%s: %s", r.ID, r.Reason)
		if r.Status == check.StatusSkip {
			assert.NotEmpty(t, r.Gate, "%s skipped: %s", r.ID, r.Reason)
		}
	}
	assert.Equal(t, check.VerdictOK, check.Judge(results))
}
