package adapter

import (
	"errors"
	"time"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// Kind classifies an adapter failure (spec §23). The string values are part
// of Sortie's contract and appear verbatim in logs, events and acprun output;
// like EventType, its one copy lives in internal/contract. Kind.Retry
// reports its retry classification: unknown kinds are never retried.
type Kind = contract.Kind

// The error kinds this adapter produces.
const (
	KindInvalidWorkspaceCwd  = contract.KindInvalidWorkspaceCwd
	KindAgentNotFound        = contract.KindAgentNotFound
	KindResponseTimeout      = contract.KindResponseTimeout
	KindResponseError        = contract.KindResponseError
	KindPortExit             = contract.KindPortExit
	KindTurnFailed           = contract.KindTurnFailed
	KindTurnCancelled        = contract.KindTurnCancelled
	KindTurnInputRequired    = contract.KindTurnInputRequired
	KindTurnRefused          = contract.KindTurnRefused
	KindTurnTokenLimit       = contract.KindTurnTokenLimit
	KindTurnRequestLimit     = contract.KindTurnRequestLimit
	KindTurnOutcomeUnknown   = contract.KindTurnOutcomeUnknown
	KindCredentialUnverified = contract.KindCredentialUnverified
	KindTurnTimeout          = contract.KindTurnTimeout
)

// Retry says whether the orchestrator may try an attempt again after a
// failure of some kind, and how (Kind.Retry).
type Retry = contract.Retry

// The retry classifications.
const (
	// RetryNever means the failure will not go away by itself.
	RetryNever = contract.RetryNever
	// RetryExponential means retry with Backoff.
	RetryExponential = contract.RetryExponential
)

// Backoff is the wait before retry attempt number attempt (1-based):
// min(10 s × 2^(attempt−1), max). A non-positive attempt counts as the first.
func Backoff(attempt int, max time.Duration) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := 10 * time.Second
	for i := 1; i < attempt; i++ {
		if d >= max || d > time.Duration(1<<62)/2 {
			break
		}
		d *= 2
	}
	if max > 0 && d > max {
		return max
	}
	return d
}

// Error is the one structured error the adapter returns. Message is the
// spec's message text, byte for byte; Err is the cause, if any.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

// Error renders the message, followed by the cause when there is one and the
// message does not already end with it (spec messages such as
// `parse MCP config: <parser error>` embed their cause).
func (e *Error) Error() string { return fault.Render(e.Message, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error of the same kind whose message is empty or equal,
// so errors.Is(err, &adapter.Error{Kind: adapter.KindPortExit}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Kind == e.Kind && (t.Message == "" || t.Message == e.Message)
}

// KindOf returns the kind of the first *Error in err's chain, or "" when
// there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// newError builds an *Error; cause may be nil.
func newError(kind Kind, message string, cause error) *Error {
	return &Error{Kind: kind, Message: message, Err: cause}
}

// lift turns a classified failure of an internal package (*fault.Error) into
// the public *Error with the same kind, message and cause. Any other error,
// including nil, is returned unchanged. Internal packages cannot build an
// *Error themselves because this package imports them.
func lift(err error) error {
	var f *fault.Error
	if errors.As(err, &f) {
		return &Error{Kind: f.Kind, Message: f.Message, Err: f.Err}
	}
	return err
}
