package adapter

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/normalize"
)

// readUpdates returns the session/update requests a connection reads from
// lines, as the pump gets them (their params trusted by DecodeParams).
func readUpdates(t *testing.T, lines ...string) []*acpsdk.Request {
	t.Helper()
	got := make(chan *acpsdk.Request, len(lines))
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	c := acpsdk.NewOrderedConn(in, io.Discard, func(_ context.Context, in *acpsdk.Inbound) {
		if in.Kind == acpsdk.InboundNotification {
			r := *in.Request
			got <- &r
		}
	}, nil)
	t.Cleanup(func() { _ = c.Close() })
	<-c.Done()
	close(got)
	var reqs []*acpsdk.Request
	for r := range got {
		reqs = append(reqs, r)
	}
	require.Len(t, reqs, len(lines), "every line is a notification")
	return reqs
}

// updatePump is a pump of session "s" in a turn that refused a permission
// for tool call t1 (DI-11), recording its events and logs; it is driven by
// calling its methods directly.
type updatePump struct {
	p      *pump
	events []Event
	log    *captureHandler
}

func newUpdatePump() *updatePump {
	l, h := newCapture()
	u := &updatePump{log: h}
	u.p = newPump(&session{a: &Adapter{now: time.Now}, log: l})
	u.p.sessionID, u.p.idKnown = "s", true
	u.p.turn = &turnState{
		ctx: context.Background(), onEvent: func(e Event) { u.events = append(u.events, e) },
		refusals: 1, refusedCalls: []string{"t1"},
	}
	return u
}

// outcome is everything an update decided, for comparing the two paths.
type updateOutcome struct {
	Events              []Event
	Logs                []record
	Pending             normalize.Event
	OpenTools           int
	ReachedModel        bool
	UpdatedAfterRefusal bool
}

func (u *updatePump) outcome() updateOutcome {
	pending, _ := u.p.norm.Messages.Flush()
	return updateOutcome{
		Events: u.events, Logs: u.log.all(), Pending: pending, OpenTools: u.p.norm.Tools.Open(),
		ReachedModel: u.p.turn.reachedModel, UpdatedAfterRefusal: u.p.turn.updatedAfterRefusal,
	}
}

// TestEV1_EV10_TrustedUpdatesDecideAsTheValidatingPath (issue #23): the
// pump normalizes an update of EV-1's set from acpsdk's one trusted
// decoding of the line; every update, whatever its shape, decides exactly
// what the validating path (exact member names, the tag as sent) decides:
// the same events, logs and state.
func TestEV1_EV10_TrustedUpdatesDecideAsTheValidatingPath(t *testing.T) {
	const env = `{"jsonrpc":"2.0","method":"session/update","params":`
	chunk := func(extra string) string {
		return `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \u00e9\n"}` + extra + `}`
	}
	cases := map[string][]string{
		"chunks": {
			`{"sessionId":"s","update":` + chunk(``) + `}`,
			`{"sessionId":"s","update":` + chunk(`,"messageId":"m1"`) + `}`,
			`{"sessionId":"s","update":` + chunk(`,"messageId":"m2"`) + `}`,
			`{"sessionId":"s","update":` + chunk(``) + `}`,
		},
		"other variants": {
			`{"sessionId":"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"u"}}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}}`,
		},
		"tool calls": {
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"x","kind":"edit"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t2","title":"y","kind":"teleport"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","title":"done"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t9","status":"completed"}}`,
		},
		"refused call's own update": {
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed"}}`,
		},
		"session ids": {
			`{"sessionId":"other","update":` + chunk(``) + `}`,
			`{"sessionId":"\u0073","update":` + chunk(``) + `}`,
			`{"sessionId":"other","sessionId":"s","update":` + chunk(``) + `}`,
			`{"sessionId":"s","sessionId":"other","update":` + chunk(``) + `}`,
			`{"sessionId":null,"update":` + chunk(``) + `}`,
			`{"sessionId":7,"update":` + chunk(``) + `}`,
			`{"update":` + chunk(``) + `}`,
			`{"SESSIONID":"s","sessionId":"s","update":` + chunk(``) + `}`,
		},
		"members": {
			`{"sessionId":"s","update":` + chunk(`,"_meta":{"k":1},"extra":[1]`) + `,"_meta":{},"other":true}`,
			`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"update":` + chunk(``) + `}`,
			`{"sessionId":"s","update":` + chunk(``) + `,"update":{"sessionUpdate":"plan","entries":[]}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"},"update":` + chunk(``) + `}`,
			`{"sessionId":"s","UPDATE":` + chunk(``) + `}`,
			`{"sessionId":"s","update":[]}`,
			`[]`,
			`null`,
		},
		"unrecognised and invalid": {
			`{"sessionId":"s","update":{"sessionUpdate":"teleport","to":"mars"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","status":"completed"}}`,
			`{"sessionId":"s","update":{"SESSIONUPDATE":"plan","entries":[]}}`,
			`{"sessionId":"s","update":{"sessionUpdate":"notice","message":"m"}}`,
		},
	}
	for name, params := range cases {
		t.Run(name, func(t *testing.T) {
			lines := make([]string, len(params))
			for i, p := range params {
				lines[i] = env + p + `}`
			}
			reqs := readUpdates(t, lines...)
			trusted, validating := newUpdatePump(), newUpdatePump()
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			for i, r := range reqs {
				trusted.p.update(r, at.Add(time.Duration(i)*time.Second))
				validating.p.updateRead(r.Params, at.Add(time.Duration(i)*time.Second))
			}
			assert.Equal(t, validating.outcome(), trusted.outcome())
		})
	}
}

// TestEV10_UnvalidatedParamsAreNotTrusted: params the connection did not
// read (a program's, a test's) never reach the trusted decoding: a chunk
// whose text is not UTF-8 is refused as the validating decoders refuse it
// (EV-10), not delivered.
func TestEV10_UnvalidatedParamsAreNotTrusted(t *testing.T) {
	u := newUpdatePump()
	params := "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"\xff\"}}}"
	u.p.update(&acpsdk.Request{Method: gen.MethodSessionUpdate, Params: []byte(params)}, time.Now())
	o := u.outcome()
	require.Len(t, o.Events, 1)
	assert.Equal(t, EventMalformed, o.Events[0].Type)
	assert.Equal(t, normalize.MsgUnrecognizedUpdate, o.Events[0].Message)
	assert.Equal(t, normalize.Event{}, o.Pending, "no text was taken")
}

// TestEV3_ChunkCostsOnlyItsDecodedValue (issue #23): a chunk the connection
// read costs the pump the update and content block acpsdk decodes, and
// nothing else: no copy of the line, no event allocation.
func TestEV3_ChunkCostsOnlyItsDecodedValue(t *testing.T) {
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`
	r := readUpdates(t, line)[0]
	u := newUpdatePump()
	u.p.turn.onEvent = func(Event) {}
	at := time.Now()
	allocs := testing.AllocsPerRun(200, func() { u.p.update(r, at) })
	assert.LessOrEqual(t, allocs, 2.0, "the update and its content block (the message's buffer grows amortised)")
}
