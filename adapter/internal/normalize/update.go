package normalize

import (
	"errors"
	"time"

	"github.com/segmentio/encoding/json"
)

// ErrBadNotification is returned by DecodeNotification for session/update
// params that are not an object with a string sessionId and an object update.
var ErrBadNotification = errors.New("session/update params did not decode")

// DecodeNotification splits session/update params into the session id and
// the raw update object. A failure is reported as EV-10's malformed event.
func DecodeNotification(params []byte) (sessionID string, update []byte, err error) {
	var p struct {
		SessionID json.RawMessage `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return "", nil, errors.Join(ErrBadNotification, err)
	}
	if !isObject(p.Update) || json.Unmarshal(p.SessionID, &sessionID) != nil || len(p.SessionID) == 0 {
		return "", nil, ErrBadNotification
	}
	return sessionID, p.Update, nil
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

// Normalizer maps one session's updates to events (EV-1..EV-8, TC-*).
// The zero value is ready to use; it is not safe for concurrent use (the
// pump owns it).
type Normalizer struct {
	Messages      Accumulator
	Tools         ToolTracker
	unknownLogged bool
}

var debugOnly = map[string]bool{
	"available_commands_update": true, "current_mode_update": true,
	"config_option_update": true, "session_info_update": true, "usage_update": true,
}

type content struct {
	Type json.RawMessage `json:"type"`
	Text json.RawMessage `json:"text"`
}

type rawUpdate struct {
	SessionUpdate json.RawMessage `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	MessageID     json.RawMessage `json:"messageId"`
	ToolCallID    json.RawMessage `json:"toolCallId"`
	Title         json.RawMessage `json:"title"`
	Kind          json.RawMessage `json:"kind"`
	Status        json.RawMessage `json:"status"`
	Entries       json.RawMessage `json:"entries"`
}

// Update normalizes one update object received at at and returns the events
// to emit in order, flushes first.
func (n *Normalizer) Update(update []byte, at time.Time) ([]Event, Info) {
	var u rawUpdate
	var info Info
	if err := json.Unmarshal(update, &u); err != nil || !isObject(update) {
		info.Unknown = true
		return n.malformed(MsgUnrecognizedUpdate, at, &info), info
	}
	variant, ok := str(u.SessionUpdate)
	info.Variant = variant
	if !ok {
		info.Unknown = true
		return n.malformed(MsgUnrecognizedUpdate, at, &info), info
	}
	switch variant {
	case "agent_message_chunk":
		info.Replay, info.ReachedModel = true, true
		typ, text, ok := decodeContent(u.Content)
		if !ok {
			return n.invalid(at, &info), info
		}
		if typ != "text" {
			return n.malformed(MsgNonTextChunk, at, &info), info
		}
		id, hasID := str(u.MessageID)
		if !hasID && !isNull(u.MessageID) {
			return n.invalid(at, &info), info
		}
		return n.Messages.Chunk(id, hasID, text, at), info
	case "user_message_chunk":
		info.Replay = true
		if _, _, ok := decodeContent(u.Content); !ok {
			return n.invalid(at, &info), info
		}
		return n.flush(nil), info
	case "agent_thought_chunk":
		info.ReachedModel = true
		if _, _, ok := decodeContent(u.Content); !ok {
			return n.invalid(at, &info), info
		}
		return n.flush([]Event{{Type: OtherMessage, Time: at, Message: MsgReasoningBlock}}), info
	case "tool_call":
		info.ReachedModel = true
		id, ok1 := str(u.ToolCallID)
		_, ok2 := str(u.Title)
		if !ok1 || !ok2 {
			return n.invalid(at, &info), info
		}
		// A wrong-typed kind falls back to "other" like an absent one.
		kind, _ := str(u.Kind)
		n.Tools.Begin(id, kind, at)
		return nil, info
	case "tool_call_update":
		id, ok := str(u.ToolCallID)
		if !ok {
			return n.invalid(at, &info), info
		}
		status, _ := str(u.Status)
		title, _ := str(u.Title)
		if e, ok := n.Tools.Update(id, status, title, at); ok {
			return n.flush([]Event{e}), info
		}
		return nil, info
	case "plan":
		if !isArray(u.Entries) {
			return n.invalid(at, &info), info
		}
		return n.flush([]Event{{Type: OtherMessage, Time: at, Message: MsgPlanUpdate}}), info
	default:
		if debugOnly[variant] {
			info.DebugOnly = true
			return nil, info
		}
		info.Unknown = true
		return n.malformed(MsgUnrecognizedUpdate, at, &info), info
	}
}

// Malformed returns a malformed event with msg, preceded by the flush of any
// pending message (EV-5), for faults the pump observes outside updates.
func (n *Normalizer) Malformed(msg string, at time.Time) []Event {
	return n.flush([]Event{{Type: Malformed, Time: at, Message: msg}})
}

// Flush ends a pending message (turn start/end, stream end) and returns its
// notification, if any.
func (n *Normalizer) Flush() []Event { return n.flush(nil) }

// Emit returns ev preceded by the flush of a pending message: any event the
// adapter itself emits ends the message being accumulated (EV-5).
func (n *Normalizer) Emit(ev Event) []Event { return n.flush([]Event{ev}) }

func (n *Normalizer) flush(then []Event) []Event {
	if e, ok := n.Messages.Flush(); ok {
		return append([]Event{e}, then...)
	}
	return then
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

// decodeContent reads a ContentBlock's type and, for text, its text.
func decodeContent(raw json.RawMessage) (typ, text string, ok bool) {
	var c content
	if !isObject(raw) || json.Unmarshal(raw, &c) != nil {
		return "", "", false
	}
	if typ, ok = str(c.Type); !ok {
		return "", "", false
	}
	if typ == "text" {
		if text, ok = str(c.Text); !ok {
			return "", "", false
		}
	}
	return typ, text, true
}

// str decodes a JSON string; false for absent, null or another type.
func str(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func isObject(raw []byte) bool { return firstByte(raw) == '{' }

func isArray(raw []byte) bool { return firstByte(raw) == '[' }

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
