package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"acpkit.dev/adapter"
)

// update is a tapped session/update line from the runtime.
func update(u string) adapter.WireEvent {
	return recv(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":` + u + `}}`)
}

func chunk(kind, text string) adapter.WireEvent {
	return update(`{"sessionUpdate":"` + kind + `","content":{"type":"text","text":"` + text + `"}}`)
}

func TestLiveViewStreamsAgentTextAsItArrives(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
	v.turnBegin(1, 1, "hi")
	// The tap reads ahead of the events: both chunks are read before the
	// first chunk's event arrives.
	v.wire(chunk("agent_message_chunk", "Hel"))
	v.wire(chunk("agent_message_chunk", "lo,\\nworld"))
	v.event(ev(adapter.EventNotification, "")) // EV-3: the first chunk
	assert.True(t, strings.HasSuffix(out.String(), "  agent     Hel"), "the first chunk is on screen before the message completes: %q", out.String())
	draw(v)
	assert.True(t, strings.HasSuffix(out.String(), "Hel"), "the indicator never overdraws a streaming line")
	v.event(ev(adapter.EventNotification, ""))
	v.event(ev(adapter.EventNotification, "Hello,\nworld")) // EV-5: the completed message
	v.event(toolEv("read", "Read README.md", 1, false))
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnCompleted})
	v.close()
	s := out.String()
	assert.Contains(t, s, "  agent     Hello,\n            world\n")
	assert.Equal(t, 1, strings.Count(s, "world"), "the completed message is not written again")
	assert.Less(t, strings.Index(s, "world"), strings.Index(s, "Read README.md"), "text and events keep the adapter's order")
}

func TestVerboseViewShowsThoughtsPlansAndToolInputAndOutput(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, false, false, nil, func() time.Time { return epoch })
	v.verbose = true
	v.wire(chunk("agent_message_chunk", "streamed"))
	v.wire(chunk("agent_thought_chunk", "Thinking "))
	v.wire(chunk("agent_thought_chunk", "hard."))
	v.wire(update(`{"sessionUpdate":"plan","entries":[{"content":"Read","priority":"high","status":"completed"},{"content":"Answer","priority":"high","status":"pending"}]}`))
	v.wire(update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read README.md","kind":"read","status":"pending","rawInput":{"path": "README.md"}}`))
	v.wire(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"# README"}},{"type":"diff","path":"main.go","newText":"x"}]}`))
	v.event(ev(adapter.EventNotification, ""))
	v.event(ev(adapter.EventNotification, "streamed"))
	v.event(ev(adapter.EventOtherMessage, "reasoning block"))
	v.event(ev(adapter.EventOtherMessage, "reasoning block"))
	v.event(ev(adapter.EventOtherMessage, "plan update"))
	v.event(toolEv("read", "Read README.md", 12, false))
	v.close()
	assert.Equal(t, "  agent     streamed\n"+
		"  thought   Thinking hard.\n"+
		"  plan      [completed] Read\n            [pending] Answer\n"+
		"  tool      read ok 12ms  Read README.md\n"+
		"  input     {\"path\":\"README.md\"}\n"+
		"  output    # README\n            diff of main.go\n", out.String(),
		"without a terminal the agent's text is the completed message, as before")
}

func TestWithoutVerboseTheLabelsStay(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, false, false, nil, func() time.Time { return epoch })
	v.wire(chunk("agent_thought_chunk", "Thinking"))
	v.event(ev(adapter.EventOtherMessage, "reasoning block"))
	v.close()
	assert.Equal(t, "  other     reasoning block\n", out.String())
}

func TestQuietStallDropsEmptyNotificationsFromJSON(t *testing.T) {
	rt := newFake(completed(ev(adapter.EventNotification, ""), ev(adapter.EventNotification, "text"), ev(adapter.EventTurnCompleted, "")))
	h := newHarness(rt)
	assert.Equal(t, ExitCompleted, h.run("--json", "--quiet-stall", "hi"))
	assert.NotContains(t, h.stdout.String(), `"type":"notification","time":"2026-11-29T12:00:01Z","message":""`)
	assert.Contains(t, h.stdout.String(), `"message":"text"`)

	h = newHarness(newFake(completed(ev(adapter.EventNotification, ""))))
	assert.Equal(t, ExitCompleted, h.run("--json", "hi"))
	assert.Contains(t, h.stdout.String(), `"type":"notification","time"`, "the default keeps them")
}

// TestEV3_EV10_LiveViewReadsUpdatesByExactMemberNames: the live view reads
// a tapped line as the adapter does, by exact member names. A line whose
// "METHOD", "PARAMS", "UPDATE", "SESSIONUPDATE" or "CONTENT" only
// case-folds to the protocol's name is not an agent text chunk, so its text
// must not take the place of the chunk the adapter's event stands for.
func TestEV3_EV10_LiveViewReadsUpdatesByExactMemberNames(t *testing.T) {
	const text = `{"type":"text","text":"folded"}`
	for _, line := range []string{
		`{"jsonrpc":"2.0","METHOD":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":` + text + `}}}`,
		`{"jsonrpc":"2.0","method":"session/update","PARAMS":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":` + text + `}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","UPDATE":{"sessionUpdate":"agent_message_chunk","content":` + text + `}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"SESSIONUPDATE":"agent_message_chunk","content":` + text + `}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","CONTENT":` + text + `}}}`,
	} {
		var out bytes.Buffer
		v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
		v.turnBegin(1, 1, "hi")
		v.wire(recv(line))
		v.wire(chunk("agent_message_chunk", "exact"))
		v.event(ev(adapter.EventNotification, "")) // EV-3: the one real chunk
		assert.NotContains(t, out.String(), "folded", line)
		assert.True(t, strings.HasSuffix(out.String(), "exact"), "%s: %q", line, out.String())
		v.close()
	}
}
