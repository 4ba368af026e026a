package acpsdk

import (
	"log/slog"

	"github.com/segmentio/encoding/json"
)

// Direction tells a wire tap whether a line was read or written.
type Direction uint8

const (
	// DirectionIn marks a line read from the peer.
	DirectionIn Direction = iota + 1
	// DirectionOut marks a line written to the peer.
	DirectionOut
)

// String returns "in" or "out".
func (d Direction) String() string {
	switch d {
	case DirectionIn:
		return "in"
	case DirectionOut:
		return "out"
	}
	return "unknown"
}

// Observer receives the connection's noteworthy events. Every field is
// optional. Callbacks run on the connection's reader, dispatcher or request
// goroutines and must return quickly; byte slices passed to them may be
// kept (the connection never reuses them) but must not be modified.
type Observer struct {
	// OversizeLine reports an inbound line longer than the line bound. The
	// line was skipped and the connection keeps running.
	OversizeLine func(err *OversizeError)
	// UnparsableLine reports a line that is not JSON; it was answered
	// with -32700 and "id": null.
	UnparsableLine func(line []byte)
	// InvalidMessage reports JSON that is not a JSON-RPC message (an array,
	// an object with neither method nor id, a bad id, ...) or a request
	// whose id is already in flight ("duplicate request id"); it was
	// answered with -32600. reason says what was wrong.
	InvalidMessage func(line []byte, reason string)
	// MethodNotFound reports an inbound request the handler does not
	// implement; it was answered with -32601.
	MethodNotFound func(method string, id json.RawMessage)
	// UnhandledNotification reports an inbound notification the handler
	// does not implement (it returned an error matching ErrMethodNotFound);
	// it was ignored.
	UnhandledNotification func(method string)
	// NotificationFailed reports a notification whose handler returned
	// another error (for example bad params). Notifications are never
	// answered, so this is the only trace of the failure.
	NotificationFailed func(method string, err error)
	// UnmatchedResponse reports a response whose id matches no call in
	// flight; it was dropped.
	UnmatchedResponse func(id json.RawMessage)
}

// events wraps the user's Observer with structured logging so call sites
// stay one line.
type events struct {
	obs Observer
	log *slog.Logger
}

func (e *events) oversize(err *OversizeError) {
	e.log.Warn("skipped oversize line", "size", err.Size, "limit", err.Limit)
	if f := e.obs.OversizeLine; f != nil {
		f(err)
	}
}

func (e *events) unparsable(line []byte) {
	e.log.Debug("line is not JSON", "bytes", len(line))
	if f := e.obs.UnparsableLine; f != nil {
		f(line)
	}
}

func (e *events) invalid(line []byte, reason string) {
	e.log.Debug("invalid message", "reason", reason)
	if f := e.obs.InvalidMessage; f != nil {
		f(line, reason)
	}
}

func (e *events) methodNotFound(method string, id json.RawMessage) {
	e.log.Debug("method not found", "method", method)
	if f := e.obs.MethodNotFound; f != nil {
		f(method, id)
	}
}

func (e *events) unhandled(method string) {
	e.log.Debug("unhandled notification", "method", method)
	if f := e.obs.UnhandledNotification; f != nil {
		f(method)
	}
}

func (e *events) notificationFailed(method string, err error) {
	e.log.Debug("notification failed", "method", method, "err", err)
	if f := e.obs.NotificationFailed; f != nil {
		f(method, err)
	}
}

func (e *events) unmatched(id json.RawMessage) {
	e.log.Debug("unmatched response", "id", string(id))
	if f := e.obs.UnmatchedResponse; f != nil {
		f(id)
	}
}
