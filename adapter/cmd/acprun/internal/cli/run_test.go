package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
)

// ev builds an event of the fake session.
func ev(typ adapter.EventType, msg string) adapter.Event {
	return adapter.Event{Type: typ, Time: epoch.Add(time.Second), Message: msg, SessionID: "sess-1", AgentPID: "4242"}
}

func toolEv(name, title string, ms int64, failed bool) adapter.Event {
	e := ev(adapter.EventToolResult, title)
	e.ToolName, e.ToolDurationMS, e.ToolError = name, ms, failed
	return e
}

// richTurn is a completed turn with one of every kind of event a view shows.
func richTurn() fakeTurn {
	usage := ev(adapter.EventTokenUsage, "")
	usage.Usage = &adapter.Usage{Input: 10, Output: 20, Total: 30, CacheRead: 4}
	usage.Model = "model-x"
	return completed(
		ev(adapter.EventSessionStarted, "session started"),
		ev(adapter.EventNotification, msgGapPrefix+"token counts"),
		ev(adapter.EventNotification, ""),
		ev(adapter.EventNotification, ""),
		ev(adapter.EventNotification, "Hello from the agent.\nA second line."),
		ev(adapter.EventOtherMessage, "reasoning block"),
		toolEv("read", "Read README.md", 12, false),
		toolEv("execute", "Run the tests", 1500, true),
		ev(adapter.EventNotification, msgRefused),
		ev(adapter.EventMalformed, "received a session update of an unrecognized kind"),
		usage,
		ev(adapter.EventTurnCompleted, ""),
	)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no prompt", nil, "no prompt given"},
		{"unknown flag", []string{"--nope", "hi"}, "unknown flag --nope"},
		{"negative read timeout", []string{"--read-timeout", "-1s", "hi"}, "--read-timeout must not be negative"},
		{"negative stop grace", []string{"--stop-grace", "-1s", "hi"}, "--stop-grace must not be negative"},
		{"negative turn timeout", []string{"--turn-timeout", "-1s", "hi"}, "--turn-timeout must not be negative"},
		{"bad duration", []string{"--turn-timeout", "soon", "hi"}, `"soon" is not a duration: use a unit, e.g. 5s`},
		{"demo with prompt", []string{"--demo", "hi"}, "--demo runs its own prompts"},
		{"demo with command", []string{"--demo", "--command", "x"}, "--demo runs its own prompts"},
		{"verify with prompt", []string{"--verify-credential", "hi"}, "--verify-credential sends its own prompt"},
		{"verify with resume", []string{"--verify-credential", "--resume", "s"}, "--verify-credential sends its own prompt"},
		{"verify with mcp", []string{"--verify-credential", "--mcp-config", "m.json"}, "--verify-credential sends its own prompt"},
		{"log level", []string{"--log-level", "loud", "hi"}, "--log-level"},
		{"host key policy", []string{"--ssh-host", "h", "--ssh-strict-host-key-checking", "ask", "hi"}, "want accept-new, yes or no"},
		{"host key policy without host", []string{"--ssh-strict-host-key-checking", "yes", "hi"}, "add --ssh-host"},
		{"pass env without host", []string{"--ssh-pass-env", "TOKEN", "hi"}, "add --ssh-host"},
		{"containment", []string{"--containment", "cgroup", "hi"}, `--containment "cgroup": want auto, tracked or off`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(newFake())
			assert.Equal(t, ExitUsage, h.run(tc.args...))
			assert.Contains(t, h.stderr.String(), tc.want)
			assert.Empty(t, h.stdout.String(), "a usage error prints nothing on stdout")
			assert.Zero(t, h.rt.stopCalls, "no session for a usage error")
		})
	}
}

func TestHelpExitsZeroOnStdout(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		h := newHarness(newFake())
		assert.Equal(t, ExitCompleted, h.run("hello", arg))
		assert.Contains(t, h.stdout.String(), "usage: acprun")
		assert.Contains(t, h.stdout.String(), "--verify-credential")
		assert.Empty(t, h.stderr.String())
		assert.Zero(t, h.rt.stopCalls, "help starts no session")
	}
}

// mcpFile writes an MCP server file and returns its path.
func mcpFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestStartParamsFromFlags(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	mcp := mcpFile(t, `{"mcpServers":{}}`)
	status := h.run("--command", "gemini --acp", "--cwd", "ws", "--resume", "saved-1",
		"--mcp-config", mcp, "--read-timeout", "1500us", "--stop-grace", "2", "--auth-method", "api-key",
		"--turn-timeout", "1m", "--json", "hello")
	require.Equal(t, ExitCompleted, status, h.stderr.String())
	assert.Equal(t, adapter.StartParams{
		WorkspacePath: "/work/here/ws",
		Agent: adapter.AgentConfig{
			Kind: adapter.KindName, Command: "gemini --acp",
			ReadTimeoutMS: 2, StopGraceMS: 2000, TurnTimeoutMS: 60000,
		},
		ResumeSessionID: "saved-1",
		MCPConfigPath:   mcp,
		AuthMethodID:    "api-key",
	}, rt.start)
	assert.Equal(t, []string{"hello"}, rt.prompts)
}

func TestTD15_ContainmentFlagReachesTheAdapter(t *testing.T) {
	for args, want := range map[string]adapter.Containment{"": adapter.ContainmentAuto, "tracked": adapter.ContainmentTracked, "off": adapter.ContainmentOff} {
		rt := newFake(completed())
		h := newHarness(rt)
		line := []string{"hello"}
		if args != "" {
			line = append([]string{"--containment", args}, line...)
		}
		require.Equal(t, ExitCompleted, h.run(line...), h.stderr.String())
		assert.Equal(t, want, rt.contain, "on by default")
	}
}

func TestSSH1_SSH3_SSHFlagsReachTheStartParams(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	status := h.run("--command", "gemini --acp", "--ssh-host", "build-1", "--ssh-strict-host-key-checking", "yes",
		"--ssh-pass-env", "GEMINI_API_KEY", "--ssh-pass-env", "HTTPS_PROXY", "hello")
	require.Equal(t, ExitCompleted, status, h.stderr.String())
	assert.Equal(t, "build-1", rt.start.SSHHost)
	assert.Equal(t, "yes", rt.start.SSHStrictHostKeyChecking)
	assert.Equal(t, []string{"GEMINI_API_KEY", "HTTPS_PROXY"}, rt.start.SSHPassEnv, "repeatable, in order")
	assert.Contains(t, h.stdout.String(), "starting gemini --acp in build-1:/work/here", "the view says where it runs")
}

func TestSP3_TheStartContextLivesAsLongAsTheSession(t *testing.T) {
	rt := newFake(completed(), completed())
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("one", "two"))
	assert.False(t, rt.startEnded, "ending the start's context would signal the runtime")
	assert.Error(t, rt.startCtx.Err(), "it ends once the run is over")
}

func TestDefaultCwdAndCommand(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("--json", "hi"))
	assert.Equal(t, "/work/here", rt.start.WorkspacePath)
	assert.Equal(t, "/opt/acpkit/acprun refagent", rt.start.Agent.Command, "the reference agent inside acprun is the default runtime")
	assert.Zero(t, rt.start.Agent.ReadTimeoutMS, "absent flags leave the adapter's defaults (CFG-5)")
	assert.Zero(t, rt.start.Agent.StopGraceMS, "absent flags leave the adapter's defaults (CFG-6)")
}

func TestCFG2_BlankCommandReachesTheAdapter(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindAgentNotFound, Message: "agent command is empty or whitespace-only"}
	h := newHarness(rt)
	h.agent = func(ctx context.Context) (string, error) {
		t.Error("the reference agent must not replace an explicitly blank command")
		return "", nil
	}
	assert.Equal(t, ExitStartFailed, h.run("--command", "  ", "--json", "hi"))
	assert.Equal(t, "  ", rt.start.Agent.Command)
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	require.Len(t, lines, 2)
	assert.Equal(t, "agent_not_found", lines[0]["error_kind"])
}

func TestAU2_VerifyCredentialSendsTheFixedPrompt(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("--verify-credential", "--json"))
	assert.True(t, rt.start.CredentialVerification)
	assert.Empty(t, rt.start.ResumeSessionID, "CL-3: a verification session never continues one")
	assert.Empty(t, rt.start.MCPConfigPath, "CL-3: a verification session declares no tool servers")
	assert.Equal(t, []string{"Say exactly: SORTIE_CREDENTIAL_OK"}, rt.prompts)
}

func TestDemoRunsItsPromptsOnTheReferenceAgent(t *testing.T) {
	turns := make([]fakeTurn, len(demoPrompts))
	for i := range turns {
		turns[i] = completed()
	}
	rt := newFake(turns...)
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("--demo"), h.stderr.String())
	assert.Equal(t, demoPrompts, rt.prompts)
	assert.Equal(t, "/opt/acpkit/acprun refagent", rt.start.Agent.Command)
}

func TestReferenceAgentUnavailableIsAStartFailure(t *testing.T) {
	h := newHarness(newFake())
	h.agent = func(context.Context) (string, error) { return "", errors.New("cannot find acprun's own executable") }
	assert.Equal(t, ExitStartFailed, h.run("--json", "hi"))
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	require.Len(t, lines, 2)
	assert.Equal(t, map[string]any{"type": "startup_failed", "error_kind": "agent_not_found",
		"message": "the reference agent is unavailable: cannot find acprun's own executable"}, lines[0])
	assert.Equal(t, "startup_failed", lines[1]["exit_reason"])
}

func TestReferenceAgentPathWithSpaceIsRefused(t *testing.T) {
	h := newHarness(newFake())
	h.agent = func(context.Context) (string, error) { return "/my dir/acprun", nil }
	assert.Equal(t, ExitStartFailed, h.run("hi"))
	assert.Contains(t, h.stdout.String(), "contains whitespace")
}

func TestVAL3_RuntimeConstructionFailureIsAStartFailure(t *testing.T) {
	h := newHarness(nil)
	assert.Equal(t, ExitStartFailed, h.run("--json", "hi"))
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	require.Len(t, lines, 2)
	assert.Equal(t, "startup_failed", lines[0]["type"])
	assert.Equal(t, "no runtime", lines[0]["message"])
}

func TestJSONCompletedTurnGolden(t *testing.T) {
	h := newHarness(newFake(richTurn()))
	require.Equal(t, ExitCompleted, h.run("--json", "hello"))
	clitest.Golden(t, "completed.jsonl", h.stdout.Bytes())
	for _, line := range clitest.JSONLines(t, h.stdout.Bytes()) {
		if line["type"] == "result" {
			continue
		}
		for _, key := range []string{"type", "time", "message", "session_id", "agent_pid", "tool_name", "tool_duration_ms", "tool_error", "usage", "model"} {
			assert.Contains(t, line, key, "every event line carries every member")
		}
	}
}

func TestJSONStartupFailedGolden(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindInvalidWorkspaceCwd, Message: "workspace path does not exist"}
	h := newHarness(rt)
	require.Equal(t, ExitStartFailed, h.run("--json", "hello"))
	clitest.Golden(t, "startup_failed.jsonl", h.stdout.Bytes())
	assert.Equal(t, 1, rt.stopCalls, "the session is stopped after a failed start too")
}

func TestExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		turn   fakeTurn
		status int
		reason string
		kind   string
	}{
		{"completed", completed(), ExitCompleted, "completed", ""},
		{"refusal", failedTurn(adapter.EventTurnFailed, adapter.KindTurnRefused, "turn failed"), ExitTurnFailed, "turn_failed", "turn_refused"},
		{"token limit", failedTurn(adapter.EventTurnFailed, adapter.KindTurnTokenLimit, "turn failed"), ExitTurnFailed, "turn_failed", "turn_token_limit"},
		{"crash", failedTurn(adapter.EventTurnFailed, adapter.KindPortExit, "the agent's connection ended before a response arrived"), ExitTurnFailed, "turn_failed", "port_exit"},
		{"cancelled", failedTurn(adapter.EventTurnCancelled, adapter.KindTurnCancelled, "turn cancelled"), ExitCancelled, "cancelled", "turn_cancelled"},
		{"input required", failedTurn(adapter.EventTurnInputRequired, adapter.KindTurnInputRequired, "agent asked for a decision only a person can make"), ExitInputRequired, "input_required", "turn_input_required"},
		{"refused turn start", fakeTurn{err: &adapter.Error{Kind: adapter.KindResponseError, Message: "a turn is already in flight for this session"}}, ExitTurnFailed, "turn_failed", "response_error"},
		{"error without kind", fakeTurn{err: errors.New("boom")}, ExitTurnFailed, "turn_failed", "turn_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newFake(tc.turn)
			h := newHarness(rt)
			assert.Equal(t, tc.status, h.run("--json", "hi"))
			lines := clitest.JSONLines(t, h.stdout.Bytes())
			require.NotEmpty(t, lines)
			res := lines[len(lines)-1]
			assert.Equal(t, "result", res["type"])
			assert.Equal(t, tc.reason, res["exit_reason"])
			assert.Equal(t, tc.kind, res["error_kind"])
			assert.Equal(t, "sess-1", res["session_id"])
			assert.EqualValues(t, 1, res["turns"])
			assert.Equal(t, 1, rt.stopCalls, "StopSession exactly once")
		})
	}
}

func TestStartFailureExitsThree(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindCredentialUnverified, Message: "the agent runtime refused its credential: bad key"}
	h := newHarness(rt)
	assert.Equal(t, ExitStartFailed, h.run("hi"))
	assert.Contains(t, h.stdout.String(), "startup failed: credential_unverified: the agent runtime refused its credential: bad key")
	assert.Contains(t, h.stdout.String(), "startup_failed (exit 3)")
}

func TestTurnTimeoutIsATurnFailure(t *testing.T) {
	rt := newFake(fakeTurn{untilCancel: true})
	h := newHarness(rt)
	assert.Equal(t, ExitTurnFailed, h.run("--json", "--turn-timeout", "1ms", "hi"))
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	res := lines[len(lines)-1]
	assert.Equal(t, "turn_timeout", res["error_kind"])
	assert.Equal(t, "turn timed out after 1ms", res["message"])
	assert.Equal(t, "turn_failed", res["exit_reason"])
}

func TestRunStopsAtTheFirstTurnThatDoesNotComplete(t *testing.T) {
	rt := newFake(completed(), failedTurn(adapter.EventTurnFailed, adapter.KindTurnRefused, "turn failed"), completed())
	h := newHarness(rt)
	assert.Equal(t, ExitTurnFailed, h.run("one", "two", "three"))
	assert.Equal(t, []string{"one", "two"}, rt.prompts)
	assert.Contains(t, h.stdout.String(), "2 (1 not run)")
	assert.Equal(t, 1, rt.stopCalls)
}

func TestPlainViewGolden(t *testing.T) {
	rt := newFake(richTurn(), failedTurn(adapter.EventTurnFailed, adapter.KindTurnRefused, "turn failed"))
	h := newHarness(rt)
	assert.Equal(t, ExitTurnFailed, h.run("--command", "refagent --demo", "first prompt\nwith a second line", "second"))
	clitest.Golden(t, "plain.txt", h.stdout.Bytes())
	assert.NotContains(t, h.stdout.String(), "\x1b", "plain output carries no escape sequences")
}

func TestMS15_SummaryShowsUsageOrNotMeasured(t *testing.T) {
	h := newHarness(newFake(measured()))
	require.Equal(t, ExitCompleted, h.run("hi"))
	assert.Contains(t, h.stdout.String(), "tokens      input 120, output 34, total 154, cache read 7, model gemini-x\n")

	h = newHarness(newFake(completed()))
	require.Equal(t, ExitCompleted, h.run("hi"))
	assert.Contains(t, h.stdout.String(), "tokens      not measured\n", "an unmeasured session never shows zero")
}

func TestFirstInterruptCancelsTheTurn(t *testing.T) {
	rt := newFake(fakeTurn{untilCancel: true}, completed())
	h := newHarness(rt)
	status := make(chan int)
	go func() { status <- h.run("--json", "slow", "never sent") }()
	<-rt.turnBegan
	h.signals <- os.Interrupt
	assert.Equal(t, ExitCancelled, <-status)
	assert.Equal(t, []string{"slow"}, rt.prompts, "no turn starts after an interrupt")
	assert.Equal(t, 1, rt.stopCalls)
	assert.False(t, rt.stopCtxDone, "the first interrupt leaves the teardown its graceful window")
	assert.Contains(t, h.stderr.String(), "press Ctrl-C again")
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	assert.Equal(t, "turn_cancelled", lines[0]["type"])
	assert.Equal(t, "cancelled", lines[len(lines)-1]["exit_reason"])
}

func TestSecondInterruptTearsDownAtOnce(t *testing.T) {
	rt := newFake(fakeTurn{untilStopped: true})
	h := newHarness(rt)
	status := make(chan int)
	go func() { status <- h.run("--json", "stubborn") }()
	<-rt.turnBegan
	h.signals <- os.Interrupt
	h.signals <- os.Interrupt
	assert.Equal(t, ExitCancelled, <-status)
	assert.Equal(t, 1, rt.stopCalls, "StopSession exactly once, though two paths reach it")
	assert.True(t, rt.stopCtxDone, "the teardown gets no graceful window")
	assert.True(t, rt.concurrent, "the teardown ends a turn still in flight")
	assert.Contains(t, h.stderr.String(), "stopping the runtime at once")
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	res := lines[len(lines)-1]
	assert.Equal(t, "cancelled", res["exit_reason"])
	assert.Equal(t, "port_exit", res["error_kind"])
}

func TestSIGTERMAndSIGHUPTearDownAtOnce(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			rt := newFake(fakeTurn{untilStopped: true})
			h := newHarness(rt)
			status := make(chan int)
			go func() { status <- h.run("stubborn") }()
			<-rt.turnBegan
			h.signals <- sig
			assert.Equal(t, ExitCancelled, <-status)
			assert.Equal(t, 1, rt.stopCalls)
			assert.True(t, rt.stopCtxDone)
		})
	}
}

func TestInterruptDuringStartCancelsIt(t *testing.T) {
	rt := newFake()
	rt.startBlock = true
	h := newHarness(rt)
	status := make(chan int)
	go func() { status <- h.run("--json", "hi") }()
	// The start blocks until cancelled, so the interrupt always lands in it
	// or before it; either way the start's context ends.
	h.signals <- os.Interrupt
	assert.Equal(t, ExitCancelled, <-status)
	assert.Empty(t, rt.prompts)
	assert.Equal(t, 1, rt.stopCalls)
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	require.Len(t, lines, 2)
	assert.Equal(t, "startup_failed", lines[0]["type"])
	assert.Equal(t, "cancelled", lines[1]["exit_reason"])
}
