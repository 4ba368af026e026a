// Package fault carries a classified failure out of the adapter's internal
// packages. They cannot import package adapter (it imports them), so they
// return *Error, whose kind is contract's (the same type as adapter.Kind),
// and the adapter lifts it into its public *adapter.Error.
package fault

import (
	"strings"

	"acpkit.dev/adapter/internal/contract"
)

// Error is a classified failure: Message is the spec's text byte for byte,
// Err the cause (may be nil).
type Error struct {
	Kind    contract.Kind
	Message string
	Err     error
}

// New builds an *Error; cause may be nil.
func New(kind contract.Kind, message string, cause error) *Error {
	return &Error{Kind: kind, Message: message, Err: cause}
}

// Error renders the message followed by the cause; see Render.
func (e *Error) Error() string { return Render(e.Message, e.Err) }

// Render is the one rendering of a classified failure, shared with
// adapter.Error: the message, then the cause when there is one and the
// message does not already end with it (spec messages such as
// `parse MCP config: <parser error>` embed their cause).
func Render(message string, cause error) string {
	if cause == nil {
		return message
	}
	text := cause.Error()
	if strings.HasSuffix(message, ": "+text) {
		return message
	}
	return message + ": " + text
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
