// Package fault carries a classified failure out of the adapter's internal
// packages. They cannot package adapter (it imports them), so they
// return *Error with the kind spelled as a string constant here, and the
// adapter lifts it into its public *adapter.Error. The constants equal the
// adapter's Kind values; adapter's tests hold the two lists together.
package fault

import "strings"

// Kind names an adapter error kind (spec §23) by its contract string.
type Kind string

// The kinds internal packages produce. Values are the contract strings.
const (
	InvalidWorkspaceCwd Kind = "invalid_workspace_cwd"
	AgentNotFound       Kind = "agent_not_found"
	ResponseError       Kind = "response_error"
	PortExit            Kind = "port_exit"
	TurnCancelled       Kind = "turn_cancelled"
)

// Kinds lists every Kind above, for the adapter's consistency test.
var Kinds = []Kind{InvalidWorkspaceCwd, AgentNotFound, ResponseError, PortExit, TurnCancelled}

// Error is a classified failure: Message is the spec's text byte for byte,
// Err the cause (may be nil).
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

// New builds an *Error; cause may be nil.
func New(kind Kind, message string, cause error) *Error {
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
