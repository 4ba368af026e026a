package cli

import (
	"bytes"
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

// TestLiveViewDrawsAndClearsTheProgressIndicator drives the live view with a
// hand-fed tick channel: each send returns once the previous tick is drawn.
func TestLiveViewDrawsAndClearsTheProgressIndicator(t *testing.T) {
	var out bytes.Buffer
	tick := make(chan time.Time)
	now := epoch
	v := newTextView(&out, true, true, tick, func() time.Time { return now })
	v.turnBegin(1, 1, "hello")
	now = epoch.Add(1500 * time.Millisecond)
	tick <- now
	v.event(ev(adapter.EventNotification, ""))
	tick <- now
	tick <- now // the second draw is done once this send is taken
	v.event(ev(adapter.EventNotification, "Done."))
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnCompleted})
	tick <- now // not waiting any more: nothing drawn
	tick <- now
	v.close()

	s := out.String()
	assert.Contains(t, s, "waiting for the agent", "the indicator says what acprun waits for")
	assert.Contains(t, s, "1.50s", "and for how long")
	assert.Contains(t, s, "the agent is writing (1 chunks)", "streamed chunks show as progress")
	assert.Contains(t, s, ansiClearLine+"  "+ansiBold+"agent ×1  "+ansiReset+"Done.\n", "a line first clears the indicator")
	assert.Contains(t, s, ansiGreen+"completed"+ansiReset)
	last := s[strings.LastIndex(s, "\n")+1:]
	assert.Empty(t, last, "nothing is drawn after the turn ended")
}

func TestLiveViewWithoutColor(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnFailed, Kind: adapter.KindPortExit, Message: "gone"})
	v.close()
	assert.Equal(t, "turn 1 failed in 0ms: port_exit: gone\n", out.String())
}
