package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
)

func TestAMistypedFlagGetsADidYouMeanAndTheShortUsage(t *testing.T) {
	h := newHarness(newFake())
	assert.Equal(t, ExitUsage, h.run("--jsno", "hi"))
	assert.Equal(t, "acprun: unknown flag --jsno (did you mean --json?)\n"+
		"usage: acprun [flags] [prompt ...] [-]\n"+
		"Run 'acprun --help' for the flags.\n", h.stderr.String(), "three lines, not every flag")
	assert.Empty(t, h.stdout.String())
}

func TestDurationsTakeBareSeconds(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("--read-timeout", "5", "--stop-grace", "0.5", "hi"), h.stderr.String())
	assert.Equal(t, 5000, rt.start.Agent.ReadTimeoutMS)
	assert.Equal(t, 500, rt.start.Agent.StopGraceMS)
}

func TestMCP5_ABadMCPConfigIsAUsageErrorBeforeAnythingStarts(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":       `{"mcpServers":`,
		"unknown key":    `{"mcpServers":{"x":{"command":"/bin/true","colour":"red"}}}`,
		"no command/url": `{"mcpServers":{"x":{}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			rt := newFake(completed())
			h := newHarness(rt)
			path := mcpFile(t, content)
			assert.Equal(t, ExitUsage, h.run("--mcp-config", path, "hi"))
			assert.Contains(t, h.stderr.String(), "acprun: --mcp-config "+path+": parse MCP config: ")
			assert.Empty(t, h.stdout.String())
			assert.Zero(t, rt.stopCalls, "nothing started")
			assert.Empty(t, rt.prompts)
		})
	}
	h := newHarness(newFake(completed()))
	assert.Equal(t, ExitUsage, h.run("--mcp-config", "/nonexistent/mcp.json", "hi"))
	assert.Contains(t, h.stderr.String(), "no such file or directory")

	rt := newFake(completed())
	h = newHarness(rt)
	assert.Equal(t, ExitCompleted, h.run("--ssh-host", "build-1", "--mcp-config", "/nonexistent/mcp.json", "hi"),
		"over ssh no server is declared (MCP-2): the file is not read")
}

func TestAU5_AuthMethodReachesTheStartAndAnUnadvertisedOneIsAUsageError(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindCredentialUnverified, Message: "…",
		Err: &adapter.AuthMethodError{Requested: "nope", Advertised: []string{"api-key", "oauth"}}}
	h := newHarness(rt)
	assert.Equal(t, ExitUsage, h.run("--json", "--auth-method", "nope", "hi"))
	assert.Equal(t, "nope", rt.start.AuthMethodID)
	assert.Equal(t, "acprun: --auth-method \"nope\": the runtime advertises api-key, oauth\n"+
		"usage: acprun [flags] [prompt ...] [-]\n"+
		"Run 'acprun --help' for the flags.\n", h.stderr.String())
	assert.Empty(t, h.stdout.String(), "a usage error prints nothing on stdout")
	assert.Equal(t, 1, rt.stopCalls, "the runtime it took to find out is stopped")

	rt = newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindCredentialUnverified, Message: "…", Err: &adapter.AuthMethodError{Requested: "x"}}
	h = newHarness(rt)
	assert.Equal(t, ExitUsage, h.run("--auth-method", "x", "hi"))
	assert.Contains(t, h.stderr.String(), "acprun: --auth-method \"x\": the runtime advertises no auth method\n")
	assert.Empty(t, h.stdout.String(), "the readable view too")

	rt = newFake(completed())
	h = newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("hi"))
	assert.Empty(t, rt.start.AuthMethodID, "never by default (AU-1)")
}

func TestPermissionsFlag(t *testing.T) {
	rt := newFake(completed())
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("hi"))
	assert.Nil(t, rt.hook, "refuse by default: the adapter's own refusal, no hook")
	for _, p := range []string{"ask", "approve-reads", "approve-all"} {
		rt := newFake(completed())
		h := newHarness(rt)
		require.Equal(t, ExitCompleted, h.run("--permissions", p, "hi"), p)
		assert.NotNil(t, rt.hook, p)
	}
	h = newHarness(newFake())
	assert.Equal(t, ExitUsage, h.run("--permissions", "yolo", "hi"))
	assert.Contains(t, h.stderr.String(), `--permissions "yolo": want refuse, ask, approve-reads or approve-all`)
}

func TestFinalPrintsOnlyTheLastAgentMessage(t *testing.T) {
	two := completed(ev(adapter.EventNotification, "First answer."), ev(adapter.EventNotification, msgRefused), ev(adapter.EventNotification, "Last answer.\nTwo lines."))
	h := newHarness(newFake(completed(ev(adapter.EventNotification, "Turn one.")), two))
	require.Equal(t, ExitCompleted, h.run("--final", "one", "two"))
	assert.Equal(t, "Last answer.\nTwo lines.\n", h.stdout.String())
	assert.Empty(t, h.stderr.String())

	h = newHarness(newFake(completed(ev(adapter.EventNotification, "Partial.")), failedTurn(adapter.EventTurnFailed, adapter.KindTurnRefused, "turn failed")))
	assert.Equal(t, ExitTurnFailed, h.run("--final", "one", "two"))
	assert.Empty(t, h.stdout.String(), "a run that did not complete has no final answer")
	assert.Contains(t, h.stderr.String(), "acprun: turn 2 ended turn_failed: turn_refused: turn failed\n")

	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindAgentNotFound, Message: "agent command not found"}
	h = newHarness(rt)
	assert.Equal(t, ExitStartFailed, h.run("--final", "hi"))
	assert.Empty(t, h.stdout.String())
	assert.Contains(t, h.stderr.String(), "acprun: startup failed: agent_not_found: agent command not found\n")

	h = newHarness(newFake())
	assert.Equal(t, ExitUsage, h.run("--final", "--json", "hi"))
	assert.Contains(t, h.stderr.String(), "--json and --final are two different outputs")
}

func TestDI11_ErrorDataReachesTheOutput(t *testing.T) {
	turn := failedTurn(adapter.EventTurnFailed, adapter.KindResponseError, "session/prompt error -32000: prompt went wrong")
	turn.err = &adapter.Error{Kind: adapter.KindResponseError, Message: "session/prompt error -32000: prompt went wrong",
		Err: errString(`jsonrpc error -32000: prompt went wrong: {"details":"401 Incorrect API key provided"}`)}
	h := newHarness(newFake(turn))
	assert.Equal(t, ExitTurnFailed, h.run("--json", "hi"))
	res := last(t, h.stdout.Bytes())
	assert.Equal(t, "session/prompt error -32000: prompt went wrong", res["message"], "DI-3's message")
	assert.Equal(t, `session/prompt error -32000: prompt went wrong: {"details":"401 Incorrect API key provided"}`, res["detail"])

	h = newHarness(newFake(turn))
	assert.Equal(t, ExitTurnFailed, h.run("hi"))
	assert.Contains(t, h.stdout.String(), `turn 1 failed in 0ms: response_error: session/prompt error -32000: prompt went wrong: {"details":"401 Incorrect API key provided"}`)
}

// errString is an error with a fixed text.
type errString string

func (e errString) Error() string { return string(e) }

// last is the last JSON line of out.
func last(t *testing.T, out []byte) map[string]any {
	t.Helper()
	lines := clitest.JSONLines(t, out)
	require.NotEmpty(t, lines)
	return lines[len(lines)-1]
}

// TestNoRawLogLineAfterAForcedStop: what the adapter logs about a stop a
// person forced (two Ctrl-C) is noise on their terminal; asked for with
// --log-level, it stays.
func TestNoRawLogLineAfterAForcedStop(t *testing.T) {
	for _, tc := range []struct {
		args []string
		logs bool
	}{
		{[]string{"stubborn"}, false},
		{[]string{"--log-level", "warn", "stubborn"}, true},
	} {
		rt := newFake(fakeTurn{untilStopped: true})
		rt.stopLogs = []string{"agent did not exit inside the graceful period and was force-terminated"}
		h := newHarness(rt)
		status := make(chan int)
		go func() { status <- h.run(tc.args...) }()
		<-rt.turnBegan
		h.signals <- os.Interrupt
		h.signals <- os.Interrupt
		assert.Equal(t, ExitCancelled, <-status)
		assert.Contains(t, h.stdout.String(), "stopping the runtime at once")
		assert.Equal(t, tc.logs, strings.Contains(h.stderr.String(), "force-terminated"), "%v: %s", tc.args, h.stderr.String())
	}
}
