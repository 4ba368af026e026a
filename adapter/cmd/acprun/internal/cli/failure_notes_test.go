package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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

func TestHintsMatchTheRuntimesOwnWords(t *testing.T) {
	for _, tc := range []struct {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hintsFor(tc.command, tc.failure, tc.stderr)
			require.Len(t, got, 1)
			assert.Contains(t, got[0], tc.want)
		})
	}
	assert.Empty(t, hintsFor("other-acp", "session/new error -32000: Authentication required", nil),
		"-32000 alone names no runtime: no guess")
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
