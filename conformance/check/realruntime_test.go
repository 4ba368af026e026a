//go:build linux

package check_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// acpcheckScript is the model behind acpcheck's prompts: the cancel prompt
// gets a slow stream (so there is a turn to cancel), everything else a
// short answer. The prompt is the conversation's last user text, so the
// turn after a cancelled one, whose request repeats the cancel prompt,
// is answered for its own.
func acpcheckScript(r fakemodel.Request) fakemodel.Reply {
	if r.OffersTools() && !r.EndsWithToolResult() && strings.Contains(r.LastUserText(), check.CancelPrompt) {
		return fakemodel.Reply{Text: "1\n2\n3\n", Slow: true}
	}
	return fakemodel.Reply{Text: "One short sentence."}
}

// TestStandard_RealRuntimes grades the real runtimes pinned in
// conformance/runtimes, with a working (fake) model: every check passes or
// is a known failure listed, with its reason, in the runtime's committed
// acpcheck.baseline. A baseline entry that starts passing fails the test,
// so the baselines cannot go stale.
func TestStandard_RealRuntimes(t *testing.T) {
	// The runtimes graded with a committed baseline; the adapter's and
	// acprun's end-to-end tests drive all of realruntime.Specs.
	for _, kind := range []realruntime.Kind{realruntime.ClaudeAgentACP, realruntime.CodexACP} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.Start(t, acpcheckScript, fakemodel.Options{MaxRequests: 256})
			rt := realruntime.Start(t, kind, fake)
			path := filepath.Join("..", "runtimes", string(kind), "acpcheck.baseline")
			f, err := os.Open(path)
			require.NoError(t, err)
			baseline, err := check.ParseBaseline(f, check.Standard())
			f.Close()
			require.NoError(t, err)

			argv, env := rt.Launch()
			results, err := check.Run(context.Background(), check.Standard(), check.Config{
				Target:    check.Target{Argv: argv, Dir: t.TempDir(), Env: env},
				Timeout:   20 * time.Second,
				ExitBound: 5 * time.Second,
			})
			require.NoError(t, err)
			baseline.Apply(results)
			var table strings.Builder
			for _, r := range results {
				fmt.Fprintf(&table, "%-32s %-10s %-11s %s\n", r.ID, r.Tier, r.Status, r.Reason)
				switch {
				case r.Fixed:
					t.Errorf("%s passes now: remove it from %s", r.ID, path)
				case r.Status == check.StatusFail && !r.Known && r.Tier != check.TierAdvisory:
					t.Errorf("%s failed: %s", r.ID, r.Reason)
				case r.Status == check.StatusNeedsModel:
					t.Errorf("%s needs a working model, but the fake model works: %s", r.ID, r.Reason)
				}
			}
			t.Logf("%s against the fake model:\n%s", kind, table.String())
			assert.Zero(t, fake.Overflow())
			rt.AssertGone(t, 5*time.Second)
		})
	}
}
