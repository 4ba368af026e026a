package adapter

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The EV-13 tests: the scripted runtime writes each case's lines in one
// write (burst:, newburst=), so they reach the connection together and
// only the adapter's own ordering decides the order of events. Each case
// runs many times under -race, so a race cannot pass by luck.

// orderLoops is how often a case repeats: turns inside one session, or
// whole sessions for a case that needs a fresh runtime each time.
const orderLoops = 200

// Messages of the events these tests expect, byte for byte from the spec.
const (
	wantStarted    = "session_started session started"
	wantCompleted  = "turn_completed turn completed"
	wantChunk      = "notification "
	wantRefused    = "notification refused a permission request because this run is unattended and no one can approve it"
	wantNeeded     = "notification the agent needs a permission this unattended run cannot grant"
	wantElicit     = "notification the agent asked for something only a person could give, and this unattended run has no one to give it: an answer to a question"
	wantUnparsable = "malformed received a line that could not be parsed as JSON-RPC"
	wantUnimpl     = "malformed the agent called a method this client does not implement"
	wantToolGated  = "notification this session delivered tool servers and the agent runtime asked for consent before running a tool; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it"
	wantGap        = "notification this session started with a declared capability gap in: token counts, session continuation"
	wantInputReq   = "turn_input_required agent asked for a decision only a person can make"
)

// sequence renders a turn's events as "type message", one per event.
func (e *events) sequence() []string {
	var out []string
	for _, ev := range e.list() {
		out = append(out, string(ev.Type)+" "+ev.Message)
	}
	return out
}

// orderedTurn runs one turn and requires its exact event sequence.
func (h *harness) orderedTurn(s Session, i int, prompt string, want ...string) {
	h.t.Helper()
	_, _, ev := h.turn(s, prompt)
	require.Equal(h.t, want, ev.sequence(), "iteration %d", i)
}

// warmTurn runs the first turn, which carries the gap notice.
func (h *harness) warmTurn(s Session) {
	h.t.Helper()
	h.orderedTurn(s, -1, "stop:end_turn", wantStarted, wantGap, wantCompleted)
}

func TestEV13_PM7_DI9_PermissionAfterEndTurn(t *testing.T) {
	// The request read after the end_turn answer is a between-turn request
	// (PM-7): the finished turn stays completed, no session/cancel goes
	// out, and the next turn ends on the latched request without a prompt.
	h := newHarness(t)
	s := h.start("ignore-term") // reads stdin to its end: the wire is whole
	h.warmTurn(s)
	for i := range orderLoops {
		h.orderedTurn(s, i, "burst:chunk:m:hi,stop:end_turn,permask:allow_once",
			wantStarted, wantChunk, "notification hi", wantCompleted)
		h.orderedTurn(s, i, "stop:end_turn",
			wantStarted, wantNeeded, wantInputReq)
	}
	h.stop(s)
	wire := h.wire()
	assert.Zero(t, count(wire, `"session/cancel"`), "no cancel for an answered prompt")
	assert.Equal(t, 1+orderLoops, count(wire, `"session/prompt"`), "a latched turn sends no prompt")
}

func TestEV13_PM7_PermissionWrittenRightAfterEndTurn(t *testing.T) {
	// The same with the request in a write of its own, right after the
	// answer's (issue #23: 2 of 8 runs took it into a turn, with a stray
	// session/cancel). The runtime then says so on stderr, and the next
	// turn is asked for only once that line is logged: the request was
	// written before RunTurn asked, so it is a between-turn request.
	h := newHarness(t)
	s := h.start("ignore-term")
	h.warmTurn(s)
	for i := range *defectLoops {
		wrote := fmt.Sprintf("wrote-%d", i)
		written := h.log.waitFor("agent stderr", wrote)
		h.orderedTurn(s, i, "reply:end_turn permask:allow_once stderr:"+wrote,
			wantStarted, wantCompleted)
		<-written
		h.orderedTurn(s, i, "stop:end_turn",
			wantStarted, wantNeeded, wantInputReq)
	}
	h.stop(s)
	wire := h.wire()
	assert.Zero(t, count(wire, `"session/cancel"`), "no cancel for an answered prompt")
	assert.Equal(t, 1+*defectLoops, count(wire, `"session/prompt"`), "a latched turn sends no prompt")
}

func TestEV13_EV11_UpdatesAfterResponseBelongToNextTurn(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	h.warmTurn(s)
	prompt := "burst:chunk:a:one,stop:end_turn,chunk:b:two,thought"
	h.orderedTurn(s, -1, prompt, wantStarted, wantChunk, "notification one", wantCompleted)
	for i := range orderLoops {
		h.orderedTurn(s, i, prompt,
			wantStarted, wantChunk, "notification two", "other_message reasoning block",
			wantChunk, "notification one", wantCompleted)
	}
}

func TestEV13_EV5_EV10_Q8_BadLineBetweenChunks(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	h.warmTurn(s)
	for i := range orderLoops {
		h.orderedTurn(s, i, "burst:chunk:m:a,garbage,chunk:m:b,stop:end_turn",
			wantStarted, wantChunk, "notification a", wantUnparsable, wantChunk, "notification b", wantCompleted)
	}
}

func TestEV13_PM1_PM4_Q8_RequestsBetweenChunks(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	h.warmTurn(s)
	for i := range orderLoops {
		h.orderedTurn(s, i, "burst:chunk:m:a,permask:reject_once,chunk:m:b,fsask,chunk:m:c,stop:end_turn",
			wantStarted, wantChunk, "notification a", wantRefused, wantChunk, "notification b", wantUnimpl,
			wantChunk, "notification c", wantCompleted)
	}
}

func TestEV13_PM3_Q8_ElicitationBetweenChunks(t *testing.T) {
	// The elicitation ends the attempt (one session/cancel); the chunk
	// read after it is still the turn's, and the end_turn answer is
	// overridden (DI-1).
	h := newHarness(t)
	s := h.start("ignore-term")
	h.warmTurn(s)
	for i := range orderLoops {
		h.orderedTurn(s, i, "burst:chunk:m:a,elicitask,chunk:m:b,stop:end_turn",
			wantStarted, wantChunk, "notification a", wantElicit, wantChunk, "notification b",
			wantInputReq+": an answer to a question")
	}
	h.stop(s)
	assert.Equal(t, orderLoops, count(h.wire(), `"session/cancel"`), "one cancel per ended attempt")
}

func TestEV13_DI6_TU3_StreamEndsAfterResponse(t *testing.T) {
	// The answer was read before the end: the turn completes. The chunk
	// read after the answer is queued for the next turn (EV-11), which
	// meets the ended stream: refused before it starts (TU-3), or, when it
	// started before the end was read, delivered the queued text and then
	// lost (DI-6).
	for i := range orderLoops {
		h := newHarness(t)
		s := h.start()
		h.orderedTurn(s, i, "burst:chunk:m:a,stop:end_turn,chunk:n:late,eof",
			wantStarted, wantGap, wantChunk, "notification a", wantCompleted)
		_, err, ev := h.turn(s, "stop:end_turn")
		assert.Equal(t, KindPortExit, KindOf(err), "iteration %d", i)
		if got := ev.sequence(); len(got) > 0 {
			assert.Equal(t, []string{wantStarted, wantChunk, "notification late",
				"turn_failed the agent's connection ended before a response arrived"}, got, "iteration %d", i)
		} else {
			assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent connection ended before this turn could start"})
		}
		h.stop(s)
	}
}

func TestEV13_PM9_SS1_PermissionRightAfterSessionNew(t *testing.T) {
	// The pump knows the delivered tool servers before it handles the
	// request read right after session/new's answer.
	for i := range orderLoops {
		h := newHarness(t)
		cfg := filepath.Join(h.dir, "mcp.json")
		require.NoError(t, os.WriteFile(cfg, []byte(`{"mcpServers":{"tools":{"command":"/bin/true"}}}`), 0o600))
		p := h.params("newburst=permask:reject_once")
		p.MCPConfigPath = cfg
		s := h.startWith(p)
		h.orderedTurn(s, i, "stop:end_turn", wantStarted, wantGap, wantRefused, wantToolGated, wantCompleted)
		assert.Len(t, h.log.find("a tool call was gated by consent in a session that delivered tool servers"), 1, "iteration %d", i)
		h.stop(s)
	}
}

func TestEV13_PM10_EV12_NullIDRequestsAnswered(t *testing.T) {
	// A request with "id": null is answered with "id": null, in order with
	// the chunks around it; a session/update with a null id stays a
	// notification (never answered).
	h := newHarness(t)
	s := h.start("ignore-term")
	h.warmTurn(s)
	for i := range orderLoops {
		h.orderedTurn(s, i, "burst:chunk:m:a,permnull:reject_once,chunk:m:b,fsnull,nullid,stop:end_turn",
			wantStarted, wantChunk, "notification a", wantRefused, wantChunk, "notification b", wantUnimpl,
			"other_message plan update", wantCompleted)
	}
	h.stop(s)
	wire := h.wire()
	assert.Equal(t, orderLoops, count(wire, `{"jsonrpc":"2.0","id":null,"result":{"outcome":{"outcome":"selected","optionId":"opt-0-reject_once"}}}`))
	assert.Equal(t, orderLoops, count(wire, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}`),
		"fs/read_text_file answered, the null-id update not")
}
