// Package contract is the one copy of the vocabulary Sortie's adapters
// share: the normalized event types, the error kinds and their retry
// classification (spec §0, §14, §23). The string values are the contract:
// they appear verbatim in events, logs and acprun's output.
//
// It imports nothing of the adapter, so the adapter's internal packages use
// these types directly, and package adapter re-exports them with type
// aliases and constant re-declarations: adapter.EventType is EventType, and
// no value is ever converted from one vocabulary to another.
package contract

// EventType is the normalized event vocabulary (spec §0).
type EventType string

// The normalized event types. The turn outcomes (DI-9) are the five
// EventTurn… types.
const (
	EventSessionStarted       EventType = "session_started"
	EventStartupFailed        EventType = "startup_failed"
	EventTurnCompleted        EventType = "turn_completed"
	EventTurnFailed           EventType = "turn_failed"
	EventTurnCancelled        EventType = "turn_cancelled"
	EventTurnEndedWithError   EventType = "turn_ended_with_error"
	EventTurnInputRequired    EventType = "turn_input_required"
	EventApprovalAutoApproved EventType = "approval_auto_approved"
	EventUnsupportedToolCall  EventType = "unsupported_tool_call"
	EventTokenUsage           EventType = "token_usage"
	EventNotification         EventType = "notification"
	EventOtherMessage         EventType = "other_message"
	EventMalformed            EventType = "malformed"
	EventToolResult           EventType = "tool_result"
)

// Kind classifies an adapter failure (spec §23).
type Kind string

// The error kinds.
const (
	KindInvalidWorkspaceCwd  Kind = "invalid_workspace_cwd"
	KindAgentNotFound        Kind = "agent_not_found"
	KindResponseTimeout      Kind = "response_timeout"
	KindResponseError        Kind = "response_error"
	KindPortExit             Kind = "port_exit"
	KindTurnFailed           Kind = "turn_failed"
	KindTurnCancelled        Kind = "turn_cancelled"
	KindTurnInputRequired    Kind = "turn_input_required"
	KindTurnRefused          Kind = "turn_refused"
	KindTurnTokenLimit       Kind = "turn_token_limit"
	KindTurnRequestLimit     Kind = "turn_request_limit"
	KindTurnOutcomeUnknown   Kind = "turn_outcome_unknown"
	KindCredentialUnverified Kind = "credential_unverified"
	KindTurnTimeout          Kind = "turn_timeout"
)

// Retry says whether the orchestrator may try an attempt again after a
// failure of some kind, and how.
type Retry int

const (
	// RetryNever means the failure will not go away by itself.
	RetryNever Retry = iota
	// RetryExponential means retry with the adapter's Backoff.
	RetryExponential
)

// Retry reports the retry classification of k (spec §23). Unknown kinds are
// never retried: retrying a failure nobody classified could loop forever.
func (k Kind) Retry() Retry {
	switch k {
	case KindResponseTimeout, KindResponseError, KindPortExit, KindTurnFailed,
		KindTurnRequestLimit, KindCredentialUnverified, KindTurnTimeout:
		return RetryExponential
	default:
		return RetryNever
	}
}
