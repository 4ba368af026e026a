package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/stderrlog"
)

func TestErrTextWritesTheRuntimesWordsOnce(t *testing.T) {
	wire := errors.New("jsonrpc error -32050: boom: extra detail")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"cause repeats the message", &adapter.Error{Kind: adapter.KindResponseError,
			Message: "initialize error -32050: boom: extra detail", Err: wire},
			"initialize error -32050: boom: extra detail"},
		{"cause adds only the code", &adapter.Error{Kind: adapter.KindCredentialUnverified,
			Message: "the agent runtime refused its credential: Gemini API key is missing or not configured.",
			Err:     errors.New("jsonrpc error -32000: Gemini API key is missing or not configured.")},
			"the agent runtime refused its credential: Gemini API key is missing or not configured. (code -32000)"},
		{"cause adds words", &adapter.Error{Kind: adapter.KindPortExit, Message: "the agent runtime exited before responding: exit status 7",
			Err: errors.New("panic: no config")}, "the agent runtime exited before responding: exit status 7: panic: no config"},
		{"no cause", &adapter.Error{Kind: adapter.KindAgentNotFound, Message: "agent command is empty"}, "agent command is empty"},
		{"not an adapter error", errors.New("plain"), "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, errText(tc.err)) })
	}
}

func TestStartFailurePrintsItsMessageOnce(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindResponseError, Message: "initialize error -32050: boom",
		Err: errors.New("jsonrpc error -32050: boom")}
	h := newHarness(rt)
	require.Equal(t, ExitStartFailed, h.run("hi"))
	assert.Equal(t, 1, bytes.Count(h.stdout.Bytes(), []byte("boom")), h.stdout.String())
}

func TestStderrTailIsOneBlockWithItsWriteTime(t *testing.T) {
	var logs bytes.Buffer
	var tail stderrTail
	log := slog.New(newTailHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}), &tail, nil)).With("component", "x")
	written := time.Date(2026, 12, 1, 9, 52, 10, 246e6, time.UTC)
	for i, line := range []string{"Error handling request {", "code: -32000,", "}"} {
		r := slog.NewRecord(written.Add(time.Duration(i)*time.Millisecond), slog.LevelDebug, stderrlog.LogMessage, 0)
		r.AddAttrs(slog.String("line", line))
		require.NoError(t, log.Handler().Handle(context.Background(), r))
	}
	log.Warn(stderrlog.LogMessage, "line", "Error handling request {") // the SS-2 re-log
	log.Warn("something else")
	assert.NotContains(t, logs.String(), "agent stderr", "neither the drain nor the re-log is a record")
	assert.Contains(t, logs.String(), "something else")
	assert.Equal(t, "acprun: the runtime's stderr, 3 lines, written from 09:52:10.246 to 09:52:10.248:\n"+
		"  | Error handling request {\n  | code: -32000,\n  | }\n", tail.block())
}

func TestStderrTailKeepsTheLastLines(t *testing.T) {
	var tail stderrTail
	for i := range stderrTailLines + 5 {
		tail.add(epoch, string(rune('a'+i)))
	}
	assert.Len(t, tail.texts(), stderrTailLines)
	assert.Contains(t, tail.block(), "the last 20 of 25 lines, written at ")
}

// hintCases are failures measured on each runtime named, in the words
// acprun holds them (the failure's text, the stderr tail), with a piece of
// the advice each must get.
var hintCases = []struct {
	name, command, failure string
	stderr                 []string
	want                   string
}{
	{"gemini without a key", "gemini --acp",
		"the agent runtime refused its credential: Gemini API key is missing or not configured.: jsonrpc error -32000: Gemini API key is missing or not configured.",
		nil, "GEMINI_API_KEY"},
	{"codex-acp logged out", "/usr/lib/node_modules/.bin/codex-acp",
		"the agent runtime refused its credential: Authentication required: jsonrpc error -32000: Authentication required",
		nil, "DEFAULT_AUTH_REQUEST='{\"methodId\":\"api-key\"}' and OPENAI_API_KEY"},
	{"claude-agent-acp as root", "claude-agent-acp", "the agent runtime exited before responding: exit status 1",
		[]string{"--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"}, "IS_SANDBOX=1"},
	{"claude-agent-acp bypass_root code", "claude-agent-acp", "session/new error -32603: bypass_root", nil, "IS_SANDBOX=1"},
	// Copilot CLI 1.0.102 with an empty HOME and no provider variables.
	{"copilot without a login or a provider", "copilot --acp --no-auto-update",
		"the agent runtime refused its credential: Authentication required: jsonrpc error -32000: Authentication required",
		nil, "COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_API_KEY and COPILOT_MODEL"},
	// cline 3.0.65 with an empty HOME.
	{"cline without a provider", "cline --acp",
		"the agent runtime refused its credential: Authentication required: Call authenticate before starting a session: jsonrpc error -32000: Authentication required: Call authenticate before starting a session",
		[]string{"[acp] starting ACP mode over stdio…", "message: \"Authentication required: Call authenticate before starting a session\","},
		"cline auth -p PROVIDER -k KEY -m MODEL"},
	// qwen-code 0.24.4 without OPENAI_*.
	{"qwen without OPENAI_*", "env HOME=/tmp/h /usr/lib/node_modules/.bin/qwen --acp",
		"the agent runtime refused its credential: Authentication required: Use Qwen Code CLI to authenticate first.: jsonrpc error -32000: Authentication required: Use Qwen Code CLI to authenticate first.",
		nil, "OPENAI_API_KEY"},
	// cline with a key its provider answers 401.
	{"cline's key rejected at the first model call", "cline --acp",
		"session/prompt error -32000: Authentication required: Incorrect API key provided: jsonrpc error -32000: Authentication required: Incorrect API key provided",
		nil, "rejected the runtime's key at the first model call"},
	// cline with a key its provider answers 401 in OpenAI's words, which
	// do not name the status: -32603, not -32000.
	{"cline's key rejected in OpenAI's words", "cline --acp",
		"session/prompt error -32603: Internal error: Incorrect API key provided: jsonrpc error -32603: Internal error: Incorrect API key provided",
		nil, "rejected the runtime's key at the first model call"},
	// qwen with a key its endpoint answers 401: the status is only in the
	// error's data, which stderr shows.
	{"qwen's key rejected at the first model call", "qwen --acp --approval-mode default",
		"session/prompt error -32603: Internal error: jsonrpc error -32603: Internal error",
		[]string{"  code: -32603,", "  message: 'Internal error',", "  data: { details: '401 Incorrect API key provided' }"},
		"rejected the runtime's key at the first model call"},
}

func TestHintsMatchTheRuntimesOwnWords(t *testing.T) {
	for _, tc := range hintCases {
		t.Run(tc.name, func(t *testing.T) {
			got := hintsFor(tc.command, tc.failure, tc.stderr)
			require.Len(t, got, 1)
			assert.Contains(t, got[0], tc.want)
		})
	}
	assert.Empty(t, hintsFor("other-acp", "session/new error -32000: Authentication required", nil),
		"-32000 alone names no runtime: no guess")
	assert.Empty(t, hintsFor("qwen --acp", "session/prompt error -32603: Internal error", []string{"  data: { details: '500 overloaded' }"}),
		"qwen's -32603 is a rejected key only with a 401")
}

// Every entry of the table is tested: a case above matches it.
func TestEveryHintIsTested(t *testing.T) {
	for i, h := range hints {
		tested := false
		for _, tc := range hintCases {
			tested = tested || h.matches(programOf(tc.command), tc.failure+"\n"+strings.Join(tc.stderr, "\n"))
		}
		assert.True(t, tested, "hint %d (%s) has no case in hintCases", i, h.text)
	}
}

func TestProgramOfSeesThroughEnv(t *testing.T) {
	for command, want := range map[string]string{
		"qwen --acp": "qwen",
		"/usr/bin/env A=1 B=2 /opt/bin/qwen --acp": "qwen",
		"env copilot --acp":                        "copilot",
		"":                                         "",
		"env A=1":                                  "",
	} {
		assert.Equal(t, want, programOf(command), command)
	}
}

func TestFailedStartShowsTheStderrBlockAndTheHint(t *testing.T) {
	rt := newFake()
	rt.startErr = &adapter.Error{Kind: adapter.KindCredentialUnverified,
		Message: "the agent runtime refused its credential: Authentication required",
		Err:     errors.New("jsonrpc error -32000: Authentication required")}
	h := newHarness(rt)
	require.Equal(t, ExitStartFailed, h.run("--json", "--command", "codex-acp", "hi"))
	assert.Contains(t, h.stderr.String(), "acprun: hint: codex-acp logs in by itself only when told how")
	lines := h.stdout.String()
	assert.Contains(t, lines, `"message":"the agent runtime refused its credential: Authentication required (code -32000)"`)
}
