//go:build linux

package adapter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/measure/claude"
	"acpkit.dev/adapter/internal/measure/codex"
	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/realruntime"
)

// End to end against the real claude-agent-acp and codex-acp (pinned in
// conformance/runtimes) talking to the fake model APIs on 127.0.0.1: the
// runtimes write their real transcripts and rollouts, and the sources of
// MS-16 read them back.

// measuredKinds are the runtimes a source of MS-16 reads.
var measuredKinds = []realruntime.Kind{realruntime.ClaudeAgentACP, realruntime.CodexACP}

// twoTurnScript answers the model calls of sessions marked SESSION-<x>
// (x in factors): a plain first turn, then a second turn whose first reply
// asks for a tool (claude-agent-acp: a sub-agent; codex-acp: a shell read)
// and whose last reply follows its result. Each call reports its own usage,
// the session's factor times a base; side calls report 7/3.
func twoTurnScript(kind realruntime.Kind, factors map[string]int64) fakemodel.Script {
	scale := func(f int64, u fakemodel.Usage) *fakemodel.Usage {
		return &fakemodel.Usage{Input: f * u.Input, Output: f * u.Output, CacheRead: f * u.CacheRead, CacheWrite: f * u.CacheWrite, Reasoning: f * u.Reasoning}
	}
	return func(r fakemodel.Request) fakemodel.Reply {
		if realruntime.SideCall(kind, r) {
			return fakemodel.Reply{Text: `{"title":"A title"}`, Usage: &fakemodel.Usage{Input: 7, Output: 3}}
		}
		for x, f := range factors {
			marker := "SESSION-" + x
			if !r.Contains(marker) {
				continue
			}
			switch {
			case r.Contains("SUBAGENT-TASK") && !r.Contains("TURN-TWO"):
				return fakemodel.Reply{Text: "Hi from the sub-agent.", Usage: scale(f, fakemodel.Usage{Input: 300, Output: 33, CacheRead: 3, CacheWrite: 1})}
			case r.Contains("TURN-TWO") && (r.Contains(`"tool_use_id":"toolu_`) || r.Contains(`"type":"function_call_output"`)):
				return fakemodel.Reply{Text: "Done with the tool.", Usage: scale(f, fakemodel.Usage{Input: 210, Output: 31, CacheRead: 60, CacheWrite: 2, Reasoning: 5})}
			case r.Contains("TURN-TWO") && kind == realruntime.ClaudeAgentACP:
				return fakemodel.Reply{Text: "Delegating.", Usage: scale(f, fakemodel.Usage{Input: 200, Output: 30, CacheRead: 50, Reasoning: 12}), ToolCall: &fakemodel.ToolCall{
					ID: "toolu_agent_" + x, Name: "Agent",
					Input: `{"description":"Say hi","prompt":"SUBAGENT-TASK for ` + marker + `: say hi","subagent_type":"general-purpose","run_in_background":false}`,
				}}
			case r.Contains("TURN-TWO"):
				return fakemodel.Reply{Text: "Reading.", Usage: scale(f, fakemodel.Usage{Input: 200, Output: 30, CacheRead: 50, Reasoning: 12}), ToolCall: &fakemodel.ToolCall{
					ID: "call_read_" + x, Name: "exec_command", Input: `{"cmd":"cat notes.txt"}`,
				}}
			}
			return fakemodel.Reply{Text: "Noted for " + marker + ".", Usage: scale(f, fakemodel.Usage{Input: 100, Output: 20, CacheRead: 40, CacheWrite: 8, Reasoning: 4})}
		}
		return fakemodel.Reply{Text: "unexpected", Usage: &fakemodel.Usage{Input: 100000, Output: 1}}
	}
}

// spent is what the fake reported so far for the calls of session x that
// the source reads, folded as the source folds them, and the model those
// calls asked for. Side calls are left out: no record of the runtime
// carries them (see the claude and codex packages).
func spent(kind realruntime.Kind, fake *fakemodel.Server, script fakemodel.Script, x string) (Usage, string) {
	var f realruntime.Figure
	model := ""
	for _, r := range fake.ModelRequests() {
		if realruntime.SideCall(kind, r) || !r.Contains("SESSION-"+x) {
			continue
		}
		f = f.Add(kind, *script(r).Usage)
		model = realruntime.Model(r)
	}
	return Usage{Input: f.Input, Output: f.Output, Total: f.Total, CacheRead: f.CacheRead}, model
}

// measuredRuntime sets kind up against a fake answering with script. The
// runtime's HOME, CLAUDE_CONFIG_DIR and CODEX_HOME are a temporary
// directory set on its command line only, not in the adapter's own
// environment: the source finds them there (MS-17).
func measuredRuntime(t *testing.T, kind realruntime.Kind, script fakemodel.Script) (realruntime.Runtime, *fakemodel.Server) {
	t.Helper()
	fake := fakemodel.Start(t, script)
	rt := realruntime.Start(t, kind, fake)
	require.NotEqual(t, rt.Home, os.Getenv("HOME"))
	t.Cleanup(func() { rt.AssertGone(t, 5*time.Second) })
	return rt, fake
}

// turnOutcome is one session's turn, run beside another's.
type turnOutcome struct {
	r   TurnResult
	err error
	ev  *events
}

func TestMS16_MS17_E2E_TwoConcurrentSessionsInOneWorkspaceMeasuredTurnByTurn(t *testing.T) {
	for _, kind := range measuredKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			factors := map[string]int64{"X": 1, "Y": 3}
			script := twoTurnScript(kind, factors)
			rt, fake := measuredRuntime(t, kind, script)
			h := newHarness(t)
			require.NoError(t, os.WriteFile(filepath.Join(h.dir, "notes.txt"), []byte("hello notes\n"), 0o644))
			p := realParams(h, rt.Command())
			p.Agent.ReadTimeoutMS = 60000

			// One start after the other: two codex processes initialising
			// a fresh CODEX_HOME at once race on its state database, and
			// one exits ("failed to initialize sqlite state runtime",
			// codex 0.166). The turns run at once.
			sessions := map[string]Session{}
			for _, x := range []string{"X", "Y"} {
				sessions[x] = h.startWith(p)
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			require.Len(t, sessions, 2)
			for x, s := range sessions {
				assert.Equal(t, map[realruntime.Kind]string{realruntime.ClaudeAgentACP: claude.Name, realruntime.CodexACP: codex.Name}[kind], confirmedSource(s), x)
			}

			for turn, prompt := range []string{"TURN-ONE: remember a lighthouse", "TURN-TWO: use your tool"} {
				outcomes := map[string]turnOutcome{}
				for x, s := range sessions {
					wg.Go(func() {
						r, err, ev := h.turn(s, fmt.Sprintf("SESSION-%s %s", x, prompt))
						mu.Lock()
						outcomes[x] = turnOutcome{r, err, ev}
						mu.Unlock()
					})
				}
				wg.Wait()
				for x, o := range outcomes {
					require.NoError(t, o.err, "session %s turn %d", x, turn+1)
					want, model := spent(kind, fake, script, x)
					list := o.ev.list()
					var usage []Event
					for i, e := range list {
						if e.Type == EventTokenUsage {
							usage = append(usage, e)
							require.Less(t, i+1, len(list))
							assert.Equal(t, EventTurnCompleted, list[i+1].Type, "MS-10: token_usage right before the terminal event")
						}
						if turn == 0 && e.Type == EventNotification {
							assert.NotContains(t, e.Message, "token counts", "RS-11: the notice leaves token counts out")
						}
					}
					require.Len(t, usage, 1, "session %s turn %d: one token_usage", x, turn+1)
					require.NotNil(t, usage[0].Usage)
					assert.Equal(t, want, *usage[0].Usage, "session %s turn %d: the run-cumulative figure the fake reported, nothing of the other session's", x, turn+1)
					assert.Equal(t, model, usage[0].Model, "MS-14: the model the records name")
					assert.Equal(t, want, o.r.Usage)
					assert.True(t, o.r.UsageMeasured)
					assert.False(t, o.r.SpendUnaccounted, "the figure covers the runtime's own lower bound")
					t.Logf("session %s turn %d: %+v, model %s; %v from the last streamed chunk to the figure (the measurement's cost)",
						x, turn+1, want, model, usage[0].Time.Sub(lastChunk(list)).Round(time.Millisecond))
				}
			}
			assert.Empty(t, h.log.find(logCapabilityLowered))
		})
	}
}

// lastChunk is the time of the last streamed chunk before the figure: the
// empty notification each chunk produces (EV-3).
func lastChunk(list []Event) time.Time {
	var last time.Time
	for _, e := range list {
		if e.Type == EventTokenUsage {
			break
		}
		if e.Type == EventNotification && e.Message == "" {
			last = e.Time
		}
	}
	return last
}

// hidingWrapper is a script named like kind's executable, so the source
// claims it, that runs the runtime with its records sent where the
// command line does not show: CLAUDE_CONFIG_DIR or CODEX_HOME in a
// directory of its own (codex's copy of its configuration goes along).
// It returns the command and that directory.
func hidingWrapper(t *testing.T, rt realruntime.Runtime) (string, string) {
	t.Helper()
	elsewhere := t.TempDir()
	variable := "CLAUDE_CONFIG_DIR"
	if rt.Kind == realruntime.CodexACP {
		variable = "CODEX_HOME"
		config, err := os.ReadFile(filepath.Join(rt.Home, ".codex", "config.toml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "config.toml"), config, 0o600))
	}
	path := filepath.Join(t.TempDir(), string(rt.Kind))
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %s \"$@\"\n", variable, elsewhere, strings.Join(append([]string{rt.Path}, rt.Args...), " "))
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return strings.Join(append(append([]string{"/usr/bin/env"}, rt.Env...), path), " "), elsewhere
}

func TestMS8_CAP7_E2E_DrainThatFindsNothingDropsTheSource(t *testing.T) {
	for _, kind := range measuredKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			rt, _ := measuredRuntime(t, kind, fakemodel.Text("Answer from the fake model."))
			h := newHarness(t)
			command, elsewhere := hidingWrapper(t, rt)
			p := realParams(h, command)
			// Longer than the source's 5 s poll: it concludes, with nothing.
			p.Agent.ReadTimeoutMS = 20000
			s := h.startWith(p)
			require.NotEmpty(t, confirmedSource(s), "claimed by its name, confirmed by its handshake")

			r, err, ev := h.turn(s, "say hello")
			require.NoError(t, err)
			assert.Equal(t, EventTurnCompleted, r.Outcome, "the turn's own disposition")
			assert.Empty(t, ev.messages(EventTokenUsage))
			assert.False(t, r.UsageMeasured)
			assert.True(t, r.SpendUnaccounted)
			assert.False(t, pumpSource(s), "MS-8: dropped")
			records, _ := filepath.Glob(filepath.Join(elsewhere, "*", "*", "*"))
			assert.NotEmpty(t, records, "the runtime wrote its records, where the source does not look")
			recs := h.log.find(logCapabilityLowered)
			require.Len(t, recs, 1, "CAP-7")
			assert.Equal(t, "WARN", recs[0].Level.String())
			assert.Equal(t, "token counts", recs[0].Attrs["capability"])

			r, err, ev = h.turn(s, "say hello again")
			require.NoError(t, err)
			assert.Empty(t, ev.messages(EventTokenUsage))
			assert.False(t, r.UsageMeasured)
			assert.Len(t, h.log.find(logCapabilityLowered), 1, "once")
		})
	}
}

func TestRS4_LOG2_E2E_WrapperAroundCodexIsRestartedWithItsSource(t *testing.T) {
	script := twoTurnScript(realruntime.CodexACP, map[string]int64{"X": 1})
	rt, fake := measuredRuntime(t, realruntime.CodexACP, script)
	wrapper := filepath.Join(t.TempDir(), "run-agent.sh")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+strings.Join(append([]string{rt.Path}, rt.Args...), " ")+" \"$@\"\n"), 0o700))
	h := newHarness(t)
	s := h.startWith(realParams(h, strings.Join(append(append([]string{"/usr/bin/env"}, rt.Env...), wrapper), " ")))
	recs := h.log.find(logRelaunchedForMeasurement)
	require.Len(t, recs, 1, "not claimed, recognised by its handshake: one restart")
	assert.Equal(t, codex.RuntimeName, recs[0].Attrs["name"])
	assert.Equal(t, codex.Name, confirmedSource(s))
	r, err, _ := h.turn(s, "SESSION-X TURN-ONE: hello")
	require.NoError(t, err)
	want, _ := spent(realruntime.CodexACP, fake, script, "X")
	assert.True(t, r.UsageMeasured)
	assert.Equal(t, want, r.Usage)
}
