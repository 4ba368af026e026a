package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
)

func send(line string) adapter.WireEvent {
	return adapter.WireEvent{Kind: adapter.WireSend, Line: []byte(line)}
}
func recv(line string) adapter.WireEvent {
	return adapter.WireEvent{Kind: adapter.WireRecv, Line: []byte(line)}
}

// resumeFake starts session id after the given traffic and log records.
func resumeFake(id string, logs []string, wire ...adapter.WireEvent) *fakeRuntime {
	rt := newFake(completed())
	rt.sess.ID = id
	rt.wire, rt.logs = wire, logs
	return rt
}

func TestSR5_ResumeSaysItContinuedAndByWhichRoute(t *testing.T) {
	rt := resumeFake("saved-1", nil,
		send(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"saved-1"}}`),
		recv(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	h := newHarness(rt)
	require.Equal(t, ExitCompleted, h.run("--json", "--resume", "saved-1", "hi"))
	lines := clitest.JSONLines(t, h.stdout.Bytes())
	assert.Equal(t, map[string]any{"type": "resume", "requested": "saved-1", "session_id": "saved-1",
		"continued": true, "route": "session/load", "reason": ""}, lines[0])
}

func TestSR7_ResumeSaysANewSessionWasCreatedAndWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   *fakeRuntime
		want string
	}{
		{"no capability", resumeFake("new-1", nil), "the runtime advertises neither session/load nor session/resume"},
		{"refused", resumeFake("new-1", []string{logContinuationFailed},
			send(`{"jsonrpc":"2.0","id":3,"method":"session/resume","params":{}}`),
			recv(`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"no such session"}}`)),
			"the runtime refused session/resume: error -32002: no such session"},
		{"not implemented", resumeFake("new-1", []string{logContinuationNotImpl},
			send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}`),
			recv(`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`)),
			"advertises session/load but does not implement it"},
		{"timed out", resumeFake("new-1", []string{logContinuationTimedOut},
			send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}`)),
			"session/load got no answer within the read timeout"},
		// A line whose "ID" and "ERROR" only case-fold to the protocol's
		// names answers nothing: the adapter's call timed out.
		{"case-folded answer", resumeFake("new-1", []string{logContinuationTimedOut},
			send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}`),
			recv(`{"jsonrpc":"2.0","ID":3,"ERROR":{"code":-32002,"message":"no such session"}}`)),
			"session/load got no answer within the read timeout"},
		{"case-folded error", resumeFake("new-1", []string{logContinuationTimedOut},
			send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}`),
			recv(`{"jsonrpc":"2.0","id":3,"Error":{"code":-32002,"message":"no such session"}}`)),
			"session/load got no answer within the read timeout"},
		{"no replay", resumeFake("new-1", nil,
			send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}`),
			recv(`{"jsonrpc":"2.0","id":3,"result":null}`)),
			"replayed none of the conversation"},
		{"probe timed out", resumeFake("new-1", []string{logNegativeControlTimedOut}), "no continuation was tried"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.rt)
			require.Equal(t, ExitCompleted, h.run("--json", "--resume", "saved-1", "hi"), "the default policy falls back")
			lines := clitest.JSONLines(t, h.stdout.Bytes())
			assert.Equal(t, "resume", lines[0]["type"])
			assert.Equal(t, false, lines[0]["continued"])
			assert.Equal(t, "new-1", lines[0]["session_id"])
			assert.Contains(t, lines[0]["reason"], tc.want)

			h = newHarness(tc.rt)
			h.rt.stopped = make(chan struct{})
			h.rt.prompts = nil
			assert.Equal(t, ExitStartFailed, h.run("--json", "--resume-policy", "required", "--resume", "saved-1", "hi"))
			lines = clitest.JSONLines(t, h.stdout.Bytes())
			res := lines[len(lines)-1]
			assert.Equal(t, "resume_not_continued", res["exit_reason"])
			assert.Contains(t, res["message"], tc.want)
			assert.Empty(t, h.rt.prompts, "no turn runs on a session the policy refused")
		})
	}
}

func TestResumePlainViewSaysWhatHappened(t *testing.T) {
	h := newHarness(resumeFake("new-1", nil))
	require.Equal(t, ExitCompleted, h.run("--resume", "saved-1", "hi"))
	assert.Contains(t, h.stdout.String(), "resume: saved session saved-1 was not continued; new session new-1: the runtime advertises neither")
}

func TestResumePolicyIsChecked(t *testing.T) {
	h := newHarness(newFake())
	assert.Equal(t, ExitUsage, h.run("--resume-policy", "maybe", "hi"))
	assert.Contains(t, h.stderr.String(), "want prefer or required")
}
