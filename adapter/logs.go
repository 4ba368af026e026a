package adapter

import (
	"context"
	"log/slog"
)

// componentAttr is carried by every record the adapter writes (§24).
const componentAttr = "clientprotocol-adapter"

// The log messages of §24, byte for byte.
const (
	logAgentImplementation   = "agent implementation"
	logStdoutNotCollected    = "agent stdout was not fully collected before the session ended"
	logHTTPServersWithheld   = "configured tool servers were not delivered: the agent does not advertise HTTP tool-server support"
	logToolGated             = "a tool call was gated by consent in a session that delivered tool servers"
	logCapabilityLowered     = "capability lowered after the once-per-session notice"
	logHumanInput            = "agent asked for a decision only a person can make, ending the attempt"
	logNegativeControlTimout = "continuation negative control timed out"
	logContinuationFailed    = "continuation call failed"
	logContinuationTimedOut  = "continuation call timed out"
	logContinuationNotImpl   = "continuation method not implemented"
	logLoadDeferred          = "session load deferred past the session's creation minute"
	logCloseNotCompleted     = "session/close did not complete before the wait ended"
	logCloseError            = "session/close returned an error"
	logCloseCallIncomplete   = "session/close call did not complete"
	logClosed                = "session closed through the protocol"
	logDeleteFailed          = "failed to delete credential verification session"
	logDeleted               = "session deleted through the protocol"
	logExitedGraceful        = "agent exited during the graceful phase"
	logForceTerminated       = "agent did not exit inside the graceful period and was force-terminated"
	logDroppingQueued        = "dropping events queued for a turn that never started"
	logQueueOverflow         = "dropped events queued between turns past the queue bound"
	logUnrecognizedVariant   = "unrecognized session update variant"
	logForeignUpdate         = "dropping session/update for a foreign session"
	logUnhandledNotification = "unhandled notification"
	logUnmatchedResponse     = "unmatched response"
	logDebugUpdate           = "session update"
)

// Values of the outcome attribute (CL-5, TD-5).
const (
	outcomeCallerDeadline = "caller deadline"
	outcomeBoundElapsed   = "bound elapsed"
	outcomeGraceElapsed   = "grace elapsed"
	outcomeExited         = "exited"
)

// componentLogger returns l with the component attribute; a nil l discards.
func componentLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return l.With("component", componentAttr)
}

// logOutcome picks the outcome of a bounded wait that ended: the caller's
// deadline when the caller's context is done, else the bound.
func logOutcome(caller context.Context, bound string) string {
	if caller.Err() != nil {
		return outcomeCallerDeadline
	}
	return bound
}
