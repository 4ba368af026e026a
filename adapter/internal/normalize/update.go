package normalize

import (
	"bytes"
	"errors"
	"time"

	"acpkit.dev/acpsdk/gen"
	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/contract"
)

// ErrBadNotification is returned by DecodeNotification for session/update
// params that are not an object with a string sessionId and an object update.
var ErrBadNotification = errors.New("session/update params did not decode")

// DecodeNotification splits session/update params into the raw session id
// (the string's bytes, as sent) and the raw update object, both sharing
// params. A failure is reported as EV-10's malformed event.
func DecodeNotification(params []byte) (sessionID []byte, update []byte, err error) {
	var sid []byte
	ok := members(params, '{', func(key, value []byte) {
		switch {
		case nameIs(key, "sessionId"):
			sid = value
		case nameIs(key, "update"):
			update = value
		}
	})
	if !ok || len(sid) < 2 || sid[0] != '"' || !IsObject(update) {
		return nil, nil, ErrBadNotification
	}
	if bytes.IndexByte(sid, '\\') >= 0 {
		s, ok := stringValue(sid)
		if !ok {
			return nil, nil, ErrBadNotification
		}
		return []byte(s), update, nil
	}
	return sid[1 : len(sid)-1], update, nil
}

// Info describes what an update was, for the pump's bookkeeping beside the
// events it produced.
type Info struct {
	// Variant is the sessionUpdate discriminator as sent ("" when absent).
	Variant string
	// Unknown is set for an unrecognised discriminator; FirstUnknown only
	// the first time in the session (EV-2 logs it once).
	Unknown, FirstUnknown bool
	// Invalid is set for a known variant whose payload failed to decode.
	Invalid bool
	// DebugOnly marks the variants that produce no event and are only logged.
	DebugOnly bool
	// Replay marks user_message_chunk and agent_message_chunk, the evidence
	// a session/load replayed history (SR-5).
	Replay bool
	// ReachedModel marks evidence the turn reached a model (MS-12).
	ReachedModel bool
}

// mark records the variant and the evidence its tag alone carries, which
// holds even when the payload then fails to decode.
func (info *Info) mark(variant string) {
	info.Variant = variant
	switch variant {
	case gen.SessionUpdateAgentMessageChunkTag:
		info.Replay, info.ReachedModel = true, true
	case gen.SessionUpdateUserMessageChunkTag:
		info.Replay = true
	case gen.SessionUpdateAgentThoughtChunkTag, gen.SessionUpdateToolCallTag:
		info.ReachedModel = true
	}
}

// Normalizer maps one session's updates to events (EV-1..EV-8, TC-*).
// The zero value is ready to use; it is not safe for concurrent use (the
// pump owns it). The events its methods return share one buffer, which its
// next call reuses: use them (or copy them) before calling it again, so
// that an update costs no allocation for its events.
type Normalizer struct {
	Messages      Accumulator
	Tools         ToolTracker
	unknownLogged bool
	out           []Event
}

// recognised is EV-1's closed set of variants. Tags gen knows beyond it
// (notice, compaction_*) are unrecognised here, like any other tag; the
// Debug-only ones map to no event whatever their payload.
var recognised = map[string]bool{
	gen.SessionUpdateAgentMessageChunkTag: true,
	gen.SessionUpdateUserMessageChunkTag:  true,
	gen.SessionUpdateAgentThoughtChunkTag: true,
	gen.SessionUpdateToolCallTag:          true,
	gen.SessionUpdateToolCallUpdateTag:    true,
	gen.SessionUpdatePlanTag:              true,
}

var debugOnly = map[string]bool{
	gen.SessionUpdateAvailableCommandsUpdateTag: true,
	gen.SessionUpdateCurrentModeUpdateTag:       true,
	gen.SessionUpdateConfigOptionUpdateTag:      true,
	gen.SessionUpdateSessionInfoUpdateTag:       true,
	gen.SessionUpdateUsageUpdateTag:             true,
}

// Decodes reports whether Decoded normalizes u: a variant of EV-1's closed
// set. Every other update (a Debug-only or unrecognised variant, or one
// that failed to decode) is Update's, which reads its tag as sent.
func Decodes(u gen.SessionUpdate) bool {
	switch u.(type) {
	case *gen.SessionUpdateAgentMessageChunk, *gen.SessionUpdateUserMessageChunk,
		*gen.SessionUpdateAgentThoughtChunk, *gen.SessionUpdateToolCall,
		*gen.SessionUpdateToolCallUpdate, *gen.SessionUpdatePlan:
		return true
	}
	return false
}

// Decoded normalizes an update already decoded, received at at, as Update
// would, when Decodes takes it (any other yields nothing: give those to
// Update, which reads their tag as sent). The adapter's pump hands it the
// update acpsdk decoded from the line it validated, so the line is walked
// once; the update's strings may share that line, so what the normalizer
// keeps past the call it clones.
func (n *Normalizer) Decoded(u gen.SessionUpdate, at time.Time) ([]Event, Info) {
	var info Info
	switch u := u.(type) {
	case *gen.SessionUpdateAgentMessageChunk:
		info.mark(gen.SessionUpdateAgentMessageChunkTag)
		c, ok := u.Content.(*gen.ContentBlockText)
		if !ok {
			return n.malformed(MsgNonTextChunk, at, &info), info
		}
		var id string
		if u.MessageID != nil {
			id = string(*u.MessageID)
		}
		n.out = n.Messages.Chunk(n.out[:0], id, u.MessageID != nil, c.Text, at)
		return n.out, info
	case *gen.SessionUpdateUserMessageChunk:
		info.mark(gen.SessionUpdateUserMessageChunkTag)
		return n.flush(), info
	case *gen.SessionUpdateAgentThoughtChunk:
		info.mark(gen.SessionUpdateAgentThoughtChunkTag)
		return n.flush(Event{Type: contract.EventOtherMessage, Time: at, Message: MsgReasoningBlock}), info
	case *gen.SessionUpdateToolCall:
		info.mark(gen.SessionUpdateToolCallTag)
		// gen decodes an unrecognised kind to nil: "other" (TC-3).
		var kind string
		if u.Kind != nil {
			kind = string(*u.Kind)
		}
		n.Tools.Begin(string(u.ToolCallID), kind, at)
		return nil, info
	case *gen.SessionUpdateToolCallUpdate:
		info.mark(gen.SessionUpdateToolCallUpdateTag)
		var status gen.ToolCallStatus
		if u.Status != nil {
			status = *u.Status
		}
		var title string
		if u.Title != nil {
			title = *u.Title
		}
		if e, ok := n.Tools.Update(string(u.ToolCallID), status, title, at); ok {
			return n.flush(e), info
		}
		return nil, info
	case *gen.SessionUpdatePlan:
		info.mark(gen.SessionUpdatePlanTag)
		return n.flush(Event{Type: contract.EventOtherMessage, Time: at, Message: MsgPlanUpdate}), info
	}
	return nil, info // not one Decodes takes: Update's
}

// Update normalizes one update object received at at and returns the events
// to emit in order, flushes first. It validates update (and decodes a
// private copy): any bytes may be given.
func (n *Normalizer) Update(update []byte, at time.Time) ([]Event, Info) {
	u, err := gen.UnmarshalSessionUpdate(update)
	if Decodes(u) {
		return n.Decoded(u, at)
	}
	var info Info
	// Unknown tag, a tag outside EV-1's set, a Debug-only variant, or a
	// decode failure: the tag as sent tells them apart.
	variant := tag(update)
	info.mark(variant)
	switch {
	case debugOnly[variant]:
		info.DebugOnly = true
		return nil, info
	case err != nil && recognised[variant]:
		return n.invalid(at, &info), info
	}
	info.Unknown = true
	return n.malformed(MsgUnrecognizedUpdate, at, &info), info
}

// Malformed returns a malformed event with msg, preceded by the flush of any
// pending message (EV-5), for faults the pump observes outside updates.
func (n *Normalizer) Malformed(msg string, at time.Time) []Event {
	return n.flush(Event{Type: contract.EventMalformed, Time: at, Message: msg})
}

// Flush ends a pending message (turn start/end, stream end) and returns its
// notification, if any.
func (n *Normalizer) Flush() []Event { return n.flush() }

// Emit returns ev preceded by the flush of a pending message: any event the
// adapter itself emits ends the message being accumulated (EV-5).
func (n *Normalizer) Emit(ev Event) []Event { return n.flush(ev) }

// flush returns, in the reused buffer, the pending message's notification
// if any, then the events then.
func (n *Normalizer) flush(then ...Event) []Event {
	out := n.out[:0]
	if e, ok := n.Messages.Flush(); ok {
		out = append(out, e)
	}
	n.out = append(out, then...)
	return n.out
}

func (n *Normalizer) invalid(at time.Time, info *Info) []Event {
	info.Invalid = true
	return n.malformed(MsgUnrecognizedUpdate, at, info)
}

func (n *Normalizer) malformed(msg string, at time.Time, info *Info) []Event {
	if info.Unknown && !n.unknownLogged {
		n.unknownLogged = true
		info.FirstUnknown = true
	}
	return n.Malformed(msg, at)
}

// tag reads an update's sessionUpdate discriminator as sent ("" when absent,
// not a string, or the update is not an object). Only the paths gen did not
// map to a recognised variant read it.
func tag(update []byte) string {
	if !json.Valid(update) {
		return ""
	}
	s, _ := StringMember(update, "sessionUpdate")
	return s
}

// IsObject reports whether raw is a JSON object (its first byte after
// white space is '{').
func IsObject(raw []byte) bool { return firstByte(raw) == '{' }

func firstByte(raw []byte) byte {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b
	}
	return 0
}
