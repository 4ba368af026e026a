//go:build linux

package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// tokensRow is the summary's token line, usageRow a turn's usage line.
var (
	tokensRow = regexp.MustCompile(`(?m)^\s+tokens\s+(.*)$`)
	usageRow  = regexp.MustCompile(`(?m)^\s*usage\s+input `)
)

// TestE2E_MS16_SummaryShowsTheFiguresTheRuntimeRecorded runs acprun on
// claude-agent-acp and codex-acp against the fake APIs, two prompts each:
// the summary shows the run-cumulative figure of every call the runtime
// recorded, as the fake reported it, and its model; each turn has its
// usage line.
func TestE2E_MS16_SummaryShowsTheFiguresTheRuntimeRecorded(t *testing.T) {
	for _, kind := range []realruntime.Kind{realruntime.ClaudeAgentACP, realruntime.CodexACP} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			first := fakemodel.Usage{Input: 100, Output: 20, CacheRead: 40, CacheWrite: 8, Reasoning: 4}
			second := fakemodel.Usage{Input: 150, Output: 25, CacheRead: 60, Reasoning: 6}
			usageOf := func(r fakemodel.Request) fakemodel.Usage {
				switch {
				case realruntime.SideCall(kind, r):
					return fakemodel.Usage{Input: 7, Output: 3}
				case r.Contains("SECOND"):
					return second
				}
				return first
			}
			rt, fake := realRuntime(t, kind, func(r fakemodel.Request) fakemodel.Reply {
				u := usageOf(r)
				if realruntime.SideCall(kind, r) {
					return fakemodel.Reply{Text: `{"title":"A title"}`, Usage: &u}
				}
				return fakemodel.Reply{Text: "Noted.", Usage: &u}
			})
			r := acprun(t, "--command", rt.Command(), "FIRST: remember a lighthouse", "SECOND: what did I mention?")
			require.Equal(t, 0, r.status, r.stderr)

			var f realruntime.Figure
			model := ""
			for _, req := range fake.ModelRequests() {
				if !realruntime.SideCall(kind, req) {
					f = f.Add(kind, usageOf(req))
					model = realruntime.Model(req)
				}
			}
			want := fmt.Sprintf("input %d, output %d, total %d, cache read %d, model %s", f.Input, f.Output, f.Total, f.CacheRead, model)
			m := tokensRow.FindStringSubmatch(string(r.stdout))
			require.NotNil(t, m, "a tokens row: %s", r.stdout)
			assert.Equal(t, want, m[1], "the fake's usage of both turns' calls")
			assert.Len(t, usageRow.FindAll(r.stdout, -1), 2, "one usage line per turn")
			assert.NotContains(t, string(r.stdout), "token counts", "the gap notice leaves token counts out")
			t.Logf("%s: %s", kind, m[0])
		})
	}
}
