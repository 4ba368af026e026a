package normalize

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter/internal/contract"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func chunk(id, text string) string {
	idPart := ""
	if id != "" {
		idPart = `,"messageId":"` + id + `"`
	}
	return `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}` + idPart + `}`
}

func run(n *Normalizer, updates ...string) []Event {
	var out []Event
	for i, u := range updates {
		evs, _ := n.Update([]byte(u), at(i))
		out = append(out, evs...)
	}
	return out
}

func TestCapAndEllipsis(t *testing.T) {
	assert.Equal(t, "abc", Cap("abc"))
	exact := strings.Repeat("é", MaxRunes)
	assert.Equal(t, exact, Cap(exact))
	long := strings.Repeat("é", MaxRunes) + "xyz"
	assert.Equal(t, exact+"…", Cap(long))
	assert.Equal(t, MaxRunes+1, len([]rune(Cap(long))))
}

func TestHS3_ErrorTextRendering(t *testing.T) {
	cases := []struct {
		name, msg, data, want string
	}{
		{"no data", "Auth required", "", "Auth required"},
		{"null data", "Auth required", "null", "Auth required"},
		{"string data raw", "Auth required", `"please log in"`, "Auth required: please log in"},
		{"object compacted", "bad", "{ \"a\" : [1, 2] }", `bad: {"a":[1,2]}`},
		{"number", "bad", "42", "bad: 42"},
		{"capped", strings.Repeat("x", 600), "", strings.Repeat("x", 500) + "…"},
		{"capped with data", strings.Repeat("x", 499), `"yz"`, strings.Repeat("x", 499) + ":" + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ErrorText(c.msg, []byte(c.data)))
		})
	}
}

func TestEV3_EachTextChunkEmitsEmptyNotification(t *testing.T) {
	var n Normalizer
	evs := run(&n, chunk("m1", "Hel"), chunk("m1", "lo"))
	require.Len(t, evs, 2)
	for _, e := range evs {
		assert.Equal(t, contract.EventNotification, e.Type)
		assert.Empty(t, e.Message)
	}
	assert.Empty(t, n.Messages.LastMessage(), "an accumulating message is not the last message")
}

func TestEV4_ChunksSharingIDAccumulateCapped(t *testing.T) {
	var n Normalizer
	run(&n, chunk("m1", "Hello, "), chunk("m1", "world"))
	evs := n.Flush()
	require.Len(t, evs, 1)
	assert.Equal(t, "Hello, world", evs[0].Message)

	var c Normalizer
	part := strings.Repeat("a", 300)
	out := run(&c, chunk("m", part), chunk("m", part), chunk("m", part))
	assert.Len(t, out, 3, "Q-8: text past the cap still emits one empty notification per chunk")
	evs = c.Flush()
	require.Len(t, evs, 1)
	assert.Equal(t, strings.Repeat("a", 500)+"…", evs[0].Message)
	assert.Equal(t, evs[0].Message, c.Messages.LastMessage())
}

func TestEV5_FlushTriggers(t *testing.T) {
	t.Run("different messageId", func(t *testing.T) {
		var n Normalizer
		evs := run(&n, chunk("m1", "one"), chunk("m2", "two"))
		require.Len(t, evs, 3)
		assert.Equal(t, Event{Type: contract.EventNotification, Time: at(0)}, evs[0])
		// the flush precedes the new chunk's empty notification.
		assert.Equal(t, Event{Type: contract.EventNotification, Time: at(0), Message: "one"}, evs[1])
		assert.Equal(t, Event{Type: contract.EventNotification, Time: at(1)}, evs[2])
	})
	t.Run("user_message_chunk", func(t *testing.T) {
		var n Normalizer
		evs := run(&n, chunk("m1", "one"), `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`)
		require.Len(t, evs, 2)
		assert.Equal(t, "one", evs[1].Message)
	})
	for name, u := range map[string]string{
		"thought":     `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
		"plan":        `{"sessionUpdate":"plan","entries":[]}`,
		"unknown":     `{"sessionUpdate":"brand_new"}`,
		"non-text":    `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"x","mimeType":"image/png"}}`,
		"bad payload": `{"sessionUpdate":"plan"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var n Normalizer
			evs := run(&n, chunk("m1", "one"), u)
			require.Len(t, evs, 3)
			assert.Equal(t, "one", evs[1].Message, "the flush precedes the event that triggered it")
			assert.NotEqual(t, contract.EventNotification, evs[2].Type)
		})
	}
	t.Run("tool_result", func(t *testing.T) {
		var n Normalizer
		evs := run(&n, `{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}`, chunk("m1", "one"),
			`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`)
		require.Len(t, evs, 3)
		assert.Equal(t, "one", evs[1].Message)
		assert.Equal(t, contract.EventToolResult, evs[2].Type)
	})
	t.Run("turn boundary", func(t *testing.T) {
		var n Normalizer
		run(&n, chunk("", "x"))
		evs := n.Flush()
		require.Len(t, evs, 1)
		assert.Equal(t, "x", evs[0].Message)
		assert.Empty(t, n.Flush(), "reported once")
	})
	t.Run("adapter event", func(t *testing.T) {
		var n Normalizer
		run(&n, chunk("", "x"))
		evs := n.Emit(Event{Type: contract.EventNotification, Message: MsgPermissionRefused})
		require.Len(t, evs, 2)
		assert.Equal(t, "x", evs[0].Message)
	})
}

func TestEV6_UpdatesWithoutEventDoNotEndMessage(t *testing.T) {
	var n Normalizer
	evs := run(&n, chunk("m1", "a"),
		`{"sessionUpdate":"usage_update","used":1,"size":2}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress"}`,
		`{"sessionUpdate":"available_commands_update","availableCommands":[]}`,
		`{"sessionUpdate":"current_mode_update","currentModeId":"x"}`,
		`{"sessionUpdate":"config_option_update","configOptions":[]}`,
		`{"sessionUpdate":"session_info_update"}`,
		chunk("m1", "b"))
	require.Len(t, evs, 2)
	out := n.Flush()
	require.Len(t, out, 1)
	assert.Equal(t, "ab", out[0].Message)
}

func TestEV7_MessageDatedAtLastChunk(t *testing.T) {
	var n Normalizer
	n.Update([]byte(chunk("m", "a")), at(10))
	n.Update([]byte(chunk("m", "b")), at(20))
	evs := n.Flush()
	require.Len(t, evs, 1)
	assert.Equal(t, at(20), evs[0].Time)
}

func TestEV8_LastMessageIsLatestCompleted(t *testing.T) {
	var n Normalizer
	run(&n, chunk("m1", "first"), chunk("m2", "second"))
	assert.Equal(t, "first", n.Messages.LastMessage())
	n.Flush()
	assert.Equal(t, "second", n.Messages.LastMessage())
}

func TestQ8_IDlessChunksAndIDSwitch(t *testing.T) {
	var n Normalizer
	evs := run(&n, chunk("", "a"), chunk("", "b"), chunk("m", "c"), chunk("", "d"))
	var msgs []string
	for _, e := range evs {
		if e.Message != "" {
			msgs = append(msgs, e.Message)
		}
	}
	assert.Equal(t, []string{"ab", "c"}, msgs)
	out := n.Flush()
	require.Len(t, out, 1)
	assert.Equal(t, "d", out[0].Message)
	// A null messageId is the same as an absent one.
	var m Normalizer
	run(&m, chunk("", "a"), `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b"},"messageId":null}`)
	assert.Equal(t, "ab", m.Flush()[0].Message)
}

func TestEV1_VariantMapping(t *testing.T) {
	cases := []struct {
		name, update string
		want         []Event
		info         Info
	}{
		{"non-text chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"x","name":"y"}}`,
			[]Event{{Type: contract.EventMalformed, Message: MsgNonTextChunk}}, Info{Variant: "agent_message_chunk", Replay: true, ReachedModel: true}},
		{"thought", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
			[]Event{{Type: contract.EventOtherMessage, Message: MsgReasoningBlock}}, Info{Variant: "agent_thought_chunk", ReachedModel: true}},
		{"user chunk", `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`,
			nil, Info{Variant: "user_message_chunk", Replay: true}},
		{"tool call", `{"sessionUpdate":"tool_call","toolCallId":"t","title":"read"}`,
			nil, Info{Variant: "tool_call", ReachedModel: true}},
		{"plan", `{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`,
			[]Event{{Type: contract.EventOtherMessage, Message: MsgPlanUpdate}}, Info{Variant: "plan"}},
		{"usage", `{"sessionUpdate":"usage_update","used":1,"size":2}`, nil, Info{Variant: "usage_update", DebugOnly: true}},
		{"unknown", `{"sessionUpdate":"notice","text":"x"}`,
			[]Event{{Type: contract.EventMalformed, Message: MsgUnrecognizedUpdate}}, Info{Variant: "notice", Unknown: true, FirstUnknown: true}},
		{"no discriminator", `{"content":{}}`,
			[]Event{{Type: contract.EventMalformed, Message: MsgUnrecognizedUpdate}}, Info{Unknown: true, FirstUnknown: true}},
		{"not an object", `[1]`,
			[]Event{{Type: contract.EventMalformed, Message: MsgUnrecognizedUpdate}}, Info{Unknown: true, FirstUnknown: true}},
		{"known variant bad payload", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}`,
			[]Event{{Type: contract.EventMalformed, Message: MsgUnrecognizedUpdate}}, Info{Variant: "agent_message_chunk", Invalid: true, Replay: true, ReachedModel: true}},
		{"tool call missing title", `{"sessionUpdate":"tool_call","toolCallId":"t"}`,
			[]Event{{Type: contract.EventMalformed, Message: MsgUnrecognizedUpdate}}, Info{Variant: "tool_call", Invalid: true, ReachedModel: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n Normalizer
			evs, info := n.Update([]byte(c.update), at(0))
			for i := range c.want {
				c.want[i].Time = at(0)
			}
			assert.Equal(t, c.want, evs)
			assert.Equal(t, c.info, info)
		})
	}
}

// TestEV1_PayloadValidityIsGens pins how the variant and payload checks
// follow gen's decoder: a tag outside EV-1's eleven is unrecognised even when
// gen knows it, a Debug-only variant stays Debug-only whatever its payload,
// an incomplete content block fails to decode, and a wrong-typed optional
// member decodes as absent.
func TestEV1_PayloadValidityIsGens(t *testing.T) {
	unrecognised := []Event{{Type: contract.EventMalformed, Time: at(0), Message: MsgUnrecognizedUpdate}}
	cases := []struct {
		name, update string
		want         []Event
		info         Info
	}{
		{"gen-known tag outside EV-1", `{"sessionUpdate":"compaction_update","x":1}`,
			unrecognised, Info{Variant: "compaction_update", Unknown: true, FirstUnknown: true}},
		{"Debug-only with a bad payload", `{"sessionUpdate":"usage_update","used":"lots"}`,
			nil, Info{Variant: "usage_update", DebugOnly: true}},
		{"tag matched exactly", `{"sessionupdate":"plan","entries":[]}`,
			unrecognised, Info{Unknown: true, FirstUnknown: true}},
		{"not JSON", `{"sessionUpdate":"plan","entries":[}`,
			unrecognised, Info{Unknown: true, FirstUnknown: true}},
		{"incomplete image block", `{"sessionUpdate":"agent_message_chunk","content":{"type":"image"}}`,
			unrecognised, Info{Variant: "agent_message_chunk", Invalid: true, Replay: true, ReachedModel: true}},
		{"unknown content type", `{"sessionUpdate":"agent_message_chunk","content":{"type":"hologram"}}`,
			[]Event{{Type: contract.EventMalformed, Time: at(0), Message: MsgNonTextChunk}}, Info{Variant: "agent_message_chunk", Replay: true, ReachedModel: true}},
		{"wrong-typed messageId is absent", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"},"messageId":5}`,
			[]Event{{Type: contract.EventNotification, Time: at(0)}}, Info{Variant: "agent_message_chunk", Replay: true, ReachedModel: true}},
		{"tool update missing id", `{"sessionUpdate":"tool_call_update","status":"completed"}`,
			unrecognised, Info{Variant: "tool_call_update", Invalid: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n Normalizer
			evs, info := n.Update([]byte(c.update), at(0))
			assert.Equal(t, c.want, evs)
			assert.Equal(t, c.info, info)
		})
	}
}

func TestEV2_UnknownLoggedOnceAndExtraKeysTolerated(t *testing.T) {
	var n Normalizer
	_, i1 := n.Update([]byte(`{"sessionUpdate":"x1"}`), at(0))
	_, i2 := n.Update([]byte(`{"sessionUpdate":"x2"}`), at(0))
	assert.True(t, i1.FirstUnknown)
	assert.False(t, i2.FirstUnknown)
	assert.True(t, i2.Unknown)
	evs, info := n.Update([]byte(`{"sessionUpdate":"plan","entries":[],"vendorExtra":{"a":1},"_meta":{"b":2}}`), at(0))
	assert.False(t, info.Invalid)
	require.Len(t, evs, 1)
	assert.Equal(t, MsgPlanUpdate, evs[0].Message)
}

func TestEV10_DecodeNotification(t *testing.T) {
	id, upd, err := DecodeNotification([]byte(`{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}`))
	require.NoError(t, err)
	assert.Equal(t, "s1", string(id))
	assert.JSONEq(t, `{"sessionUpdate":"plan","entries":[]}`, string(upd))
	for _, bad := range []string{``, `null`, `[]`, `{"sessionId":1,"update":{}}`, `{"sessionId":"s"}`, `{"update":{}}`, `{"sessionId":"s","update":"x"}`, `{`} {
		_, _, err := DecodeNotification([]byte(bad))
		assert.ErrorIs(t, err, ErrBadNotification, bad)
	}
}

func TestTC1_ToolCallRecordedWrongTypedNameDropped(t *testing.T) {
	var n Normalizer
	evs, info := n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","name":42}`), at(0))
	assert.Empty(t, evs)
	assert.False(t, info.Invalid)
	assert.Equal(t, 1, n.Tools.Open())
	evs, info = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","name":{"x":1}}`), at(1500))
	assert.False(t, info.Invalid)
	require.Len(t, evs, 1)
	assert.Equal(t, "execute", evs[0].ToolName)

	// Wrong-typed optional members of an update read as absent too.
	n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"x","name":["a"]}`), at(0))
	evs, info = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":7,"title":false,"name":1}`), at(1))
	assert.False(t, info.Invalid)
	assert.Empty(t, evs, "a wrong-typed status is not terminal")
	evs, _ = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed","title":false}`), at(2))
	require.Len(t, evs, 1)
	assert.Empty(t, evs[0].Message, "a wrong-typed title is empty")
	assert.True(t, evs[0].ToolError)
}

func TestTC2_TerminalUpdateEmitsOneToolResult(t *testing.T) {
	var n Normalizer
	n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read it","kind":"read"}`), at(100))
	evs, _ := n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","title":"`+strings.Repeat("z", 501)+`"}`), at(350))
	require.Len(t, evs, 1)
	assert.Equal(t, Event{Type: contract.EventToolResult, Time: at(350), Message: strings.Repeat("z", 500) + "…", ToolName: "read", ToolDurationMS: 250, ToolError: true}, evs[0])
	assert.Zero(t, n.Tools.Open(), "the record is removed")
	evs, _ = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`), at(400))
	assert.Empty(t, evs, "unknown id emits nothing")

	n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"x"}`), at(500))
	evs, _ = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t2"}`), at(501))
	assert.Empty(t, evs, "absent status is not terminal")
	evs, _ = n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed"}`), at(400))
	require.Len(t, evs, 1)
	assert.Zero(t, evs[0].ToolDurationMS, "duration clamps at zero")
	assert.Empty(t, evs[0].Message, "absent title is empty")
	assert.False(t, evs[0].ToolError)
}

func TestTC3_KindNormalization(t *testing.T) {
	for _, k := range []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"} {
		assert.Equal(t, k, ToolKind(k))
	}
	for _, k := range []string{"", "Read", "write", "shell"} {
		assert.Equal(t, "other", ToolKind(k))
	}
	for _, kind := range []string{`7`, `"shell"`, `null`, `"Read"`} {
		var n Normalizer
		n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":`+kind+`}`), at(0))
		evs, _ := n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`), at(0))
		require.Len(t, evs, 1, kind)
		assert.Equal(t, "other", evs[0].ToolName, kind)
	}
	var n Normalizer
	n.Update([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"switch_mode"}`), at(0))
	evs, _ := n.Update([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`), at(0))
	require.Len(t, evs, 1)
	assert.Equal(t, "switch_mode", evs[0].ToolName)
}

func TestPM1_SelectFirstRejectOnceElseRejectAlways(t *testing.T) {
	id, ok := SelectRefusal([]PermissionOption{
		{"a1", "allow_once"}, {"ra", "reject_always"}, {"r1", "reject_once"}, {"r2", "reject_once"},
	})
	assert.True(t, ok)
	assert.Equal(t, "r1", id)
	id, ok = SelectRefusal([]PermissionOption{{"a1", "allow_always"}, {"ra", "reject_always"}, {"rb", "reject_always"}})
	assert.True(t, ok)
	assert.Equal(t, "ra", id)
	// Names and ids are never interpreted.
	id, ok = SelectRefusal([]PermissionOption{{"reject", "allow_once"}, {"allow", "reject_once"}})
	assert.True(t, ok)
	assert.Equal(t, "allow", id)
}

func TestPM2_NoRefusingOption(t *testing.T) {
	_, ok := SelectRefusal([]PermissionOption{{"a", "allow_once"}, {"b", "allow_always"}, {"c", "weird"}})
	assert.False(t, ok)
	_, ok = SelectRefusal(nil)
	assert.False(t, ok)
}

func TestCAP1_OnlyLoweredInFixedOrder(t *testing.T) {
	var c Capabilities
	assert.Equal(t, "tool servers", ToolServers.String())
	assert.Equal(t, "token counts", TokenCounts.String())
	assert.Equal(t, "session continuation", SessionContinuation.String())
	assert.Equal(t, "agent version", AgentVersion.String())
	assert.False(t, c.Lower(AgentVersion))
	assert.False(t, c.Lower(AgentVersion), "lowering twice is a no-op")
	c.Lower(ToolServers)
	msg, ok := c.Notice()
	assert.True(t, ok)
	assert.Equal(t, "this session started with a declared capability gap in: tool servers, agent version", msg)
}

func TestCAP6_NoticeOnceAndNothingWhenNoGap(t *testing.T) {
	var none Capabilities
	_, ok := none.Notice()
	assert.False(t, ok)
	var c Capabilities
	c.Lower(TokenCounts)
	msg, ok := c.Notice()
	assert.True(t, ok)
	assert.Equal(t, "this session started with a declared capability gap in: token counts", msg)
	_, ok = c.Notice()
	assert.False(t, ok, "once per session")
}

func TestCAP7_LoweringAfterNoticeWarns(t *testing.T) {
	var c Capabilities
	c.Lower(TokenCounts)
	c.Notice()
	assert.True(t, c.Lower(SessionContinuation))
	assert.False(t, c.Lower(SessionContinuation), "already lowered")
	assert.False(t, c.Lower(TokenCounts))
	assert.True(t, c.Gap(SessionContinuation))
	assert.False(t, c.Gap(AgentVersion))
	// A record whose notice had nothing to say still warns afterwards.
	var d Capabilities
	d.Notice()
	assert.True(t, d.Lower(AgentVersion))
}

func TestDI2_StopReasonTable(t *testing.T) {
	cases := []struct {
		reason    string
		requested bool
		want      Outcome
	}{
		{"end_turn", false, Outcome{contract.EventTurnCompleted, "", MsgTurnCompleted}},
		{"refusal", false, Outcome{contract.EventTurnFailed, "turn_refused", "turn failed"}},
		{"max_tokens", false, Outcome{contract.EventTurnFailed, "turn_token_limit", "turn failed"}},
		{"max_turn_requests", false, Outcome{contract.EventTurnFailed, "turn_request_limit", "turn failed"}},
		{"cancelled", true, Outcome{contract.EventTurnCancelled, "turn_cancelled", "turn cancelled"}},
		{"cancelled", false, Outcome{contract.EventTurnFailed, "turn_failed", "agent reported a cancelled stop reason without a cancellation on either side"}},
		{"paused", false, Outcome{contract.EventTurnFailed, "turn_outcome_unknown", `agent reported an unrecognized stop reason: "paused"`}},
		// The whole message is capped, as Sortie does, not the value in it.
		{strings.Repeat("q", 600), false, Outcome{contract.EventTurnFailed, "turn_outcome_unknown", `agent reported an unrecognized stop reason: "` + strings.Repeat("q", 500-len(`agent reported an unrecognized stop reason: "`)) + `…`}},
		{strings.Repeat("é", 454), false, Outcome{contract.EventTurnFailed, "turn_outcome_unknown", `agent reported an unrecognized stop reason: "` + strings.Repeat("é", 454) + `"`}},
		{strings.Repeat("é", 455), false, Outcome{contract.EventTurnFailed, "turn_outcome_unknown", `agent reported an unrecognized stop reason: "` + strings.Repeat("é", 455) + `…`}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, StopReason(c.reason, c.requested), c.reason)
	}
}

func TestDI10_CancelledAfterRefusalNeedsAPerson(t *testing.T) {
	want := Outcome{contract.EventTurnInputRequired, contract.KindTurnInputRequired, "agent asked for a decision only a person can make: a permission this unattended run refused"}
	assert.Equal(t, want, StopReasonAfterRefusal("cancelled", true))
	assert.Equal(t, StopReason("cancelled", false), StopReasonAfterRefusal("cancelled", false), "no refusal: DI-2's unrequested cancel")
	for _, reason := range []string{"end_turn", "refusal", "max_tokens", "max_turn_requests", "paused"} {
		assert.Equal(t, StopReason(reason, false), StopReasonAfterRefusal(reason, true), "%s after a refusal keeps DI-2's row", reason)
	}
}

func TestDI5_InputRequiredMessage(t *testing.T) {
	assert.Equal(t, Outcome{contract.EventTurnInputRequired, "turn_input_required", "agent asked for a decision only a person can make"}, InputRequired(""))
	assert.Equal(t, "agent asked for a decision only a person can make: an answer to a question", InputRequired(ElicitationDetail).Message)
}
