package transcript

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter"
)

func TestReplayRefusesAnotherPromptNamingBoth(t *testing.T) {
	b := record(t,
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"Summarise README.md"}]}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
		terminated,
	)
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	var out bytes.Buffer
	code, err := Replay(tr, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"Delete everything"}]}}`+"\n"), &out, io.Discard)
	require.ErrorIs(t, err, ErrDiverged)
	assert.Equal(t, 1, code)
	assert.Equal(t, `replay: the client diverged from the transcript: the client sent the prompt "Delete everything" where the recording has "Summarise README.md"`, err.Error())
	assert.Empty(t, out.String(), "the recorded answers are not passed off as the other prompt's")

	code, err = Replay(tr, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"other","prompt":[{"type":"text","text":"Summarise README.md"}]}}`+"\n"), &out, io.Discard)
	require.NoError(t, err, "the same prompt replays")
	assert.Equal(t, 0, code)
}

func TestShowPrintsATimeline(t *testing.T) {
	b := record(t,
		adapter.WireEvent{Kind: adapter.WireSpawn, AgentPID: "42", Argv: []string{"/bin/agent", "--acp"}},
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`),
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/ws","mcpServers":[]}}`),
		line(adapter.WireStderr, "Loaded cached credentials."),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}`),
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Write the notes"}]}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"On it."}}}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"w","title":"Write notes.txt","kind":"edit"},"options":[]}}`),
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"completed","title":"Wrote notes.txt"}}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"And again"}]}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"authentication required"}}`),
		line(adapter.WireRecv, "not json"),
		adapter.WireEvent{Kind: adapter.WireExit, ExitStatus: "exit status 0", ExitCode: 0},
	)
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Show(&out, tr))
	assert.Equal(t, `transcript of agent --acp in /ws
recorded 2026-12-01T10:00:00Z by test

    0.001s  process  started, pid 42: /bin/agent --acp
    0.002s  client   initialize #1
    0.003s  runtime  answered initialize #1 in 1ms: ok
    0.004s  client   session/new #2
    0.005s  stderr   Loaded cached credentials.
    0.006s  runtime  answered session/new #2 in 2ms: session sess-1
    0.007s  client   session/prompt #3: "Write the notes"
    0.008s  runtime  session/update agent_message_chunk "On it."
    0.009s  runtime  session/request_permission #0: edit "Write notes.txt"
    0.010s  client   answered session/request_permission #0 in 1ms: selected allow
    0.011s  runtime  session/update tool_call_update completed "Wrote notes.txt"
    0.012s  runtime  answered session/prompt #3 in 5ms: end_turn
    0.013s  client   session/prompt #4: "And again"
    0.014s  runtime  answered session/prompt #4 in 1ms: error -32000: authentication required
    0.015s  runtime  a line that is not JSON-RPC: not json
    0.016s  process  exited: exit status 0

turns
  1       5ms  "Write the notes": end_turn
  2       1ms  "And again": error -32000: authentication required
`, out.String())
}

// TestShowAndReplayReadMembersByExactNames: the timeline and the replay
// read a line as acpsdk reads it, by exact member names; "ID", "Result",
// "PROMPT" or "METHOD" only case-fold to the protocol's names and are
// other members.
func TestShowAndReplayReadMembersByExactNames(t *testing.T) {
	b := record(t,
		line(adapter.WireSend, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","PROMPT":[{"type":"text","text":"folded"}]}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","ID":3,"method":"session/update","params":{"sessionId":"s","UPDATE":{"sessionUpdate":"plan","entries":[]}}}`),
		line(adapter.WireRecv, `{"jsonrpc":"2.0","id":3,"Result":{"stopReason":"refusal"}}`),
	)
	tr, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Show(&out, tr))
	assert.Contains(t, out.String(), `client   session/prompt #3: ""`+"\n")
	assert.Contains(t, out.String(), "runtime  session/update\n", "a notification: ID is not id, UPDATE not update")
	assert.Contains(t, out.String(), "runtime  answered session/prompt #3 in 2ms: ok\n", "Result is not result")
	assert.NotContains(t, out.String(), "folded")
	assert.NotContains(t, out.String(), "refusal")

	_, err = Replay(session(t, terminated), strings.NewReader(`{"jsonrpc":"2.0","id":1,"METHOD":"session/prompt"}`+"\n"), &out, io.Discard)
	require.ErrorIs(t, err, ErrDiverged)
	assert.Contains(t, err.Error(), "expected the client's next message to be a session/prompt request, got a response")
}
