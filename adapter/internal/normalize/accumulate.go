package normalize

import (
	"strings"
	"time"
	"unicode/utf8"

	"acpkit.dev/adapter/internal/contract"
)

// Accumulator joins the text chunks of one agent message (EV-3..EV-8, Q-8).
// Chunks sharing a messageId form one message; consecutive chunks without
// an id form one message too, and a switch between absent and present id
// starts a new one. The zero value is ready to use.
type Accumulator struct {
	open   bool
	hasID  bool
	id     string
	text   strings.Builder
	runes  int  // runes kept in text, at most MaxRunes
	capped bool // text beyond MaxRunes was discarded
	last   time.Time
	latest string // the latest completed message (EV-8)
}

// Chunk adds one text chunk received at at. It appends to dst the events
// to emit in order and returns the extended slice: the previous message's
// flush when this chunk starts a new message, then the chunk's own empty
// notification (EV-3), which exists so the stall timer resets without
// replacing the last message shown.
func (a *Accumulator) Chunk(dst []Event, id string, hasID bool, text string, at time.Time) []Event {
	if a.open && (hasID != a.hasID || id != a.id) {
		if e, ok := a.Flush(); ok {
			dst = append(dst, e)
		}
	}
	if !a.open {
		// Its own copy: the caller's id may share a line, and the
		// message outlives it.
		a.open, a.hasID, a.id = true, hasID, strings.Clone(id)
	}
	a.add(text)
	a.last = at
	return append(dst, Event{Type: contract.EventNotification, Time: at})
}

// add appends text up to the rune cap and remembers whether any was cut.
func (a *Accumulator) add(text string) {
	if a.capped {
		return
	}
	room := MaxRunes - a.runes
	n := utf8.RuneCountInString(text)
	if n <= room {
		a.text.WriteString(text)
		a.runes += n
		return
	}
	i := 0
	for pos := range text {
		if i == room {
			a.text.WriteString(text[:pos])
			break
		}
		i++
	}
	a.runes = MaxRunes
	a.capped = true
}

// Pending reports whether a message is being accumulated.
func (a *Accumulator) Pending() bool { return a.open }

// Flush ends the open message and returns its notification, dated at its
// last chunk (EV-7). It returns false when no message is open or the message
// has no text: an empty report would be indistinguishable from a chunk's
// stall-reset notification and would blank the last message shown.
func (a *Accumulator) Flush() (Event, bool) {
	if !a.open {
		return Event{}, false
	}
	msg := a.text.String()
	if a.capped {
		msg += Ellipsis
	}
	at := a.last
	a.open, a.hasID, a.id, a.runes, a.capped = false, false, "", 0, false
	a.text.Reset()
	if msg == "" {
		return Event{}, false
	}
	a.latest = msg
	return Event{Type: contract.EventNotification, Time: at, Message: msg}, true
}

// LastMessage is the latest completed message, capped (EV-8); a message
// still accumulating does not count.
func (a *Accumulator) LastMessage() string { return a.latest }
