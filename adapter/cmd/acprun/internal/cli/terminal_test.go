package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"acpkit.dev/adapter"
)

func TestWrapTextBreaksBetweenWordsUnderTheTag(t *testing.T) {
	at := func(col int) wrapState { return wrapState{col: col} }
	for _, tc := range []struct {
		name  string
		text  string
		from  wrapState
		width int
		want  string
		to    wrapState
	}{
		{"fits", "Hello world", at(12), 40, "Hello world", wrapState{col: 23, midWord: true}},
		{"a word crossing the edge starts the next line", "Hello wonderful", at(12), 24, "Hello\n            wonderful", wrapState{col: 21, midWord: true}},
		{"spaces wait for the next word", "Hello ", at(12), 24, "Hello", wrapState{col: 17, spaces: " "}},
		{"and are dropped where the line breaks", "wonderful", wrapState{col: 17, spaces: " "}, 24, "\n            wonderful", wrapState{col: 21, midWord: true}},
		{"a newline is indented", "one\ntwo", at(12), 0, "one\n            two", wrapState{col: 15, midWord: true}},
		{"a word longer than a line breaks at the edge", "abcdefghijklmnop", at(12), 20, "abcdefgh\n            ijklmnop", wrapState{col: 20, midWord: true}},
		{"a word continued from a chunk before stays put", "ld there", wrapState{col: 20, midWord: true}, 22, "ld\n            there", wrapState{col: 17, midWord: true}},
		{"no width, no wrapping", strings.Repeat("x ", 3) + "y", at(12), 0, "x x x y", wrapState{col: 19, midWord: true}},
		{"runes count once", "ééé ééé", at(12), 18, "ééé\n            ééé", wrapState{col: 15, midWord: true}},
	} {
		got, to := wrapText(tc.text, tc.from, textIndent, tc.width)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, tc.to, to, tc.name)
	}
}

func TestLiveStreamWrapsUnderItsTag(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
	v.width = func() int { return 30 }
	v.turnBegin(1, 1, "hi")
	v.wire(chunk("agent_message_chunk", "The reference agent "))
	v.wire(chunk("agent_message_chunk", "streams this text across lines"))
	v.event(ev(adapter.EventNotification, ""))
	v.event(ev(adapter.EventNotification, ""))
	v.event(ev(adapter.EventNotification, "The reference agent streams this text across lines"))
	v.close()
	assert.Equal(t, "turn 1/1 hi\n"+
		"  agent     The reference\n"+
		"            agent streams this\n"+
		"            text across lines\n", out.String(), "no line is wider than 30 columns and each continues under the tag")
	for _, l := range strings.Split(out.String(), "\n") {
		assert.LessOrEqual(t, len([]rune(l)), 30)
	}
}

func TestLiveTaggedLinesWrapToo(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, true, false, nil, func() time.Time { return epoch })
	v.width = func() int { return 40 }
	v.event(ev(adapter.EventNotification, msgRefused))
	v.close()
	assert.Equal(t, "  refused   refused a permission request\n"+
		"            because this run is\n"+
		"            unattended and no one can\n"+
		"            approve it\n", out.String())
}

// TestSpinnerResumesBelowAPausedMessage: while an open message is silent
// the indicator comes back on the line below it, and the text continues
// where it stopped once the indicator is erased.
func TestSpinnerResumesBelowAPausedMessage(t *testing.T) {
	var out bytes.Buffer
	now := epoch
	v := newTextView(&out, true, true, nil, func() time.Time { return now })
	v.width = func() int { return 80 }
	v.turnBegin(1, 1, "hi")
	v.wire(chunk("agent_message_chunk", "Thinking it over"))
	v.event(ev(adapter.EventNotification, ""))
	before := out.Len()
	draw(v)
	assert.Equal(t, before, out.Len(), "not while the message flows")
	now = now.Add(streamPause)
	draw(v)
	drawn := out.String()[before:]
	assert.True(t, strings.HasPrefix(drawn, "\r\n"+ansiEraseLine), "on the next line: %q", drawn)
	assert.Contains(t, drawn, "the agent is writing (1 chunk)")
	assert.True(t, strings.HasSuffix(drawn, ansiUp+"\x1b[29G"), "back after the text: %q", drawn)
	v.wire(chunk("agent_message_chunk", "..."))
	v.event(ev(adapter.EventNotification, ""))
	assert.True(t, strings.HasSuffix(out.String(), ansiEraseBelow+"..."), "the indicator is erased before the text goes on")
	v.close()
}

func TestNoEscapesWithoutColor(t *testing.T) {
	var out bytes.Buffer
	tick := make(chan time.Time)
	now := epoch
	v := newTextView(&out, true, false, tick, func() time.Time { return now })
	v.width = func() int { return 80 }
	v.turnBegin(1, 1, "hi")
	v.wire(chunk("agent_message_chunk", "Hello"))
	v.event(ev(adapter.EventNotification, ""))
	now = now.Add(time.Minute)
	draw(v)
	v.event(ev(adapter.EventNotification, "Hello"))
	v.turnEnd(turnReport{N: 1, Outcome: adapter.EventTurnCompleted})
	v.close()
	assert.NotContains(t, out.String(), "\x1b", "TERM=dumb, NO_COLOR: text streams, nothing else is drawn")
	assert.Equal(t, "turn 1/1 hi\n  agent     Hello\nturn 1 completed in 0ms\n", out.String())
}

func TestPauseClearsTheTerminalForAQuestion(t *testing.T) {
	var out bytes.Buffer
	now := epoch
	v := newTextView(&out, true, true, nil, func() time.Time { return now })
	v.turnBegin(1, 1, "hi")
	v.wire(chunk("agent_message_chunk", "Asking"))
	v.event(ev(adapter.EventNotification, ""))
	resume := v.pause()
	assert.True(t, strings.HasSuffix(out.String(), "Asking\n"), "the open message ends its line")
	before := out.Len()
	now = now.Add(time.Minute)
	draw(v)
	assert.Equal(t, before, out.Len(), "nothing is drawn over the question")
	resume()
	v.wire(chunk("agent_message_chunk", " done"))
	v.event(ev(adapter.EventNotification, ""))
	assert.Contains(t, out.String()[before:], "agent    "+ansiReset+"  done", "the message goes on under a new tag")
	v.close()
}

func TestDI11_TheViewsSayTheRuntimeStoppedAtARefusal(t *testing.T) {
	stopped := completed(ev(adapter.EventNotification, msgRefused))
	stopped.result.PermissionsRefused = 1
	h := newHarness(newFake(stopped))
	assert.Equal(t, ExitCompleted, h.run("hi"))
	assert.Contains(t, h.stdout.String(), "  note      the runtime stopped at a refused permission; nothing ran after it\nturn 1 completed")

	carried := completed()
	carried.result.PermissionsRefused, carried.result.UpdatedAfterRefusal = 2, true
	h = newHarness(newFake(carried))
	assert.Equal(t, ExitCompleted, h.run("hi"))
	assert.NotContains(t, h.stdout.String(), "stopped at a refused permission")

	h = newHarness(newFake(stopped, carried))
	assert.Equal(t, ExitCompleted, h.run("--json", "one", "two"))
	assert.Contains(t, h.stdout.String(), `"permissions_refused":3,"stopped_at_refusal":true}`)
}

func TestPM11_DecisionsAreTagged(t *testing.T) {
	var out bytes.Buffer
	v := newTextView(&out, false, false, nil, func() time.Time { return epoch })
	v.event(ev(adapter.EventNotification, `approved a permission request: selected "Allow" (allow_once) for edit "Write x": approved at the terminal`))
	v.event(ev(adapter.EventNotification, "refused a permission request: declined at the terminal"))
	v.close()
	assert.Equal(t, "  approved  approved a permission request: selected \"Allow\" (allow_once) for edit \"Write x\": approved at the terminal\n"+
		"  refused   refused a permission request: declined at the terminal\n", out.String())
}
