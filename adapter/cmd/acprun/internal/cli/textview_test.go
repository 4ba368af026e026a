package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"acpkit.dev/adapter"
)

func TestClassifyNotice(t *testing.T) {
	for msg, want := range map[string]noticeKind{
		"":            noticeChunk,
		"Hello.":      noticeAgentText,
		msgRefused:    noticeRefused,
		msgNeedsGrant: noticeNeedsPerson,
		msgNeedsAnswer + "an answer to a question":   noticeNeedsPerson,
		msgGapPrefix + "token counts, agent version": noticeGap,
		msgToolGatedPre + "; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it": noticeToolGated,
	} {
		assert.Equal(t, want, classifyNotice(msg), "%q", msg)
	}
}

func TestFmtDur(t *testing.T) {
	assert.Equal(t, "0ms", fmtDur(0))
	assert.Equal(t, "999ms", fmtDur(999*time.Millisecond))
	assert.Equal(t, "1.00s", fmtDur(time.Second))
	assert.Equal(t, "12.35s", fmtDur(12345*time.Millisecond))
}

func TestFirstLine(t *testing.T) {
	assert.Equal(t, "short", firstLine("short", 10))
	assert.Equal(t, "one …", firstLine("one\ntwo", 10))
	assert.Equal(t, "ééé…", firstLine("éééé", 3))
}

func TestMillis(t *testing.T) {
	assert.Equal(t, 0, millis(0))
	assert.Equal(t, 1, millis(time.Nanosecond), "a positive bound never becomes the default")
	assert.Equal(t, 1500, millis(1500*time.Millisecond))
}

// draw redraws the indicator as one tick of the spinner goroutine does.
func draw(v *textView) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.drawSpinner()
}

func TestLiveViewDrawsAndClearsTheProgressIndicator(t *testing.T) {
	var out bytes.Buffer
	now := epoch
	v := newTextView(&out, true, true, nil, func() time.Time { return now })
	v.turnBegin(1, 1, "hello")
	now = epoch.Add(1500 * time.Millisecond)
	draw(v)
	assert.Contains(t, out.String(), "waiting for the agent "+ansiDim+"1.50s", "the indicator says what acprun waits for, and for how long")
	v.event(ev(adapter.EventNotification, ""))
	draw(v)
	assert.Contains(t, out.String(), "the agent is writing (1 chunk)", "streamed chunks show as progress")
	v.event(ev(adapter.EventNotification, "Done."))
	assert.True(t, strings.HasSuffix(out.String(), ansiClearLine+"  "+ansiBold+"agent    "+ansiReset+" Done.\n"), "a line first clears the indicator")
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnCompleted})
	assert.Contains(t, out.String(), ansiGreen+"completed"+ansiReset)
	before := out.Len()
	draw(v)
	assert.Equal(t, before, out.Len(), "nothing is drawn once the turn ended")
	v.close()
}

func TestLiveViewSpinsOnTicks(t *testing.T) {
	var out bytes.Buffer
	tick := make(chan time.Time)
	v := newTextView(&out, true, true, tick, func() time.Time { return epoch })
	v.status("starting the runtime")
	tick <- epoch
	tick <- epoch // taken only after the first tick was drawn
	v.close()
	s := out.String()
	assert.Contains(t, s, ansiCyan+spinnerFrames[1]+ansiReset+" starting the runtime "+ansiDim+"0ms")
	assert.True(t, strings.HasSuffix(s, ansiClearLine), "close clears the indicator")
}

func TestLiveViewWithoutColor(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnFailed, Kind: adapter.KindPortExit, Message: "gone"})
	v.close()
	assert.Equal(t, "turn 1 failed in 0ms: port_exit: gone\n", out.String())
}

func TestLiveViewClearsTheIndicatorBeforeALogRecord(t *testing.T) {
	var out, logs bytes.Buffer
	v := newTextView(&out, true, true, nil, func() time.Time { return epoch })
	v.status("building the reference agent")
	draw(v)
	w := v.logWriter(&logs)
	_, err := w.Write([]byte("level=WARN msg=x\n"))
	assert.NoError(t, err)
	assert.True(t, strings.HasSuffix(out.String(), "0ms"+ansiReset+ansiClearLine), "the indicator line is cleared before the record")
	assert.Equal(t, "level=WARN msg=x\n", logs.String())
	v.close()

	var plain bytes.Buffer
	pv := newTextView(&out, false, false, nil, time.Now)
	assert.Equal(t, io.Writer(&plain), pv.logWriter(&plain), "plain output needs no clearing")
	pv.close()
}

func TestPlainViewTagsEveryKindOfEvent(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, false, false, nil, func() time.Time { return epoch })
	for _, e := range []adapter.Event{
		ev(adapter.EventNotification, msgNeedsGrant),
		ev(adapter.EventNotification, msgNeedsAnswer+"an answer to a question"),
		ev(adapter.EventNotification, msgToolGatedPre+"; …"),
		ev(adapter.EventApprovalAutoApproved, "approved"),
		ev(adapter.EventUnsupportedToolCall, "unsupported"),
		ev(adapter.EventTokenUsage, ""), // no usage: nothing to show
		ev(adapter.EventTurnEndedWithError, "said by turnEnd"),
	} {
		v.event(e)
	}
	v.turnEnd(turnReport{N: 3, Outcome: adapter.EventTurnInputRequired, Kind: adapter.KindTurnInputRequired, Message: "agent asked for a decision only a person can make"})
	v.turnEnd(turnReport{N: 4, Outcome: adapter.EventTurnCancelled, Kind: adapter.KindTurnCancelled, Message: "turn cancelled"})
	v.close()
	assert.Equal(t, ""+
		"  needs you the agent needs a permission this unattended run cannot grant\n"+
		"  needs you "+msgNeedsAnswer+"an answer to a question\n"+
		"  gated     "+msgToolGatedPre+"; …\n"+
		"  approval_auto_approved approved\n"+
		"  unsupported_tool_call unsupported\n"+
		"turn 3 needs a person in 0ms: turn_input_required: agent asked for a decision only a person can make\n"+
		"turn 4 cancelled in 0ms: turn_cancelled: turn cancelled\n", out.String())
}
