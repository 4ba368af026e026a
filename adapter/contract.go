package adapter

import (
	"time"

	"acpkit.dev/adapter/internal/contract"
)

// KindName is the agent kind this adapter registers under (CFG-1).
const KindName = "agent-client-protocol"

// EventType is the normalized event vocabulary Sortie shares across
// adapters. Its one copy lives in internal/contract, which the adapter's
// internal packages use directly; the names here are that copy's.
type EventType = contract.EventType

// The normalized event types (spec §0).
const (
	EventSessionStarted       = contract.EventSessionStarted
	EventStartupFailed        = contract.EventStartupFailed
	EventTurnCompleted        = contract.EventTurnCompleted
	EventTurnFailed           = contract.EventTurnFailed
	EventTurnCancelled        = contract.EventTurnCancelled
	EventTurnEndedWithError   = contract.EventTurnEndedWithError
	EventTurnInputRequired    = contract.EventTurnInputRequired
	EventApprovalAutoApproved = contract.EventApprovalAutoApproved
	EventUnsupportedToolCall  = contract.EventUnsupportedToolCall
	EventTokenUsage           = contract.EventTokenUsage
	EventNotification         = contract.EventNotification
	EventOtherMessage         = contract.EventOtherMessage
	EventMalformed            = contract.EventMalformed
	EventToolResult           = contract.EventToolResult
)

// Usage is a token-usage snapshot: the session's run-cumulative figures.
type Usage struct {
	Input     int64
	Output    int64
	Total     int64
	CacheRead int64
}

// Event is one normalized event delivered to TurnParams.OnEvent.
type Event struct {
	Type      EventType
	Time      time.Time // UTC
	AgentPID  string
	SessionID string
	Message   string
	// Usage is set on token_usage and terminal events of a measured session.
	Usage *Usage
	// Model names the model a measurement source attributed usage to.
	Model string
	// ToolName, ToolDurationMS and ToolError describe a tool_result.
	ToolName       string
	ToolDurationMS int64
	ToolError      bool
}

// AgentConfig is the generic agent block of WORKFLOW.md this kind reads (CFG-4).
type AgentConfig struct {
	Kind           string
	Command        string
	ReadTimeoutMS  int
	TurnTimeoutMS  int
	StallTimeoutMS int
	StopGraceMS    int
}

// StartParams are the per-session inputs of StartSession.
type StartParams struct {
	// WorkspacePath is the directory the runtime works in (LT-1).
	WorkspacePath string
	Agent         AgentConfig
	// ResumeSessionID, when set, asks to continue that session (§10).
	ResumeSessionID string
	// SSHHost, when non-blank, launches the runtime over SSH (§21).
	SSHHost string
	// SSHStrictHostKeyChecking is accept-new (default), yes or no.
	SSHStrictHostKeyChecking string
	// SSHPassEnv names environment variables carried to the remote side.
	SSHPassEnv []string
	// MCPConfigPath is the absolute path of the generated MCP file (MCP-1).
	MCPConfigPath string
	// CredentialVerification marks a credential-verification session (AU-2).
	CredentialVerification bool
	// AuthMethodID, when set, makes the start call authenticate with this
	// method before any session call (AU-5): the runtime must advertise it
	// in its initialize answer, else the start fails with an
	// *AuthMethodError before session/new. Never set by Sortie (AU-1):
	// runtimes read their own credential.
	AuthMethodID string
}

// TurnParams are the inputs of one RunTurn.
type TurnParams struct {
	// Prompt is the rendered prompt text.
	Prompt string
	// OnEvent receives normalized events while the turn is open; it is never
	// called after RunTurn returns. It may be nil.
	OnEvent func(Event)
}

// TurnResult is what RunTurn returns, also alongside a non-nil error.
type TurnResult struct {
	SessionID string
	// Outcome is the turn's terminal event type (DI-9).
	Outcome EventType
	// Kind is the error kind of a turn that did not complete, else "".
	Kind    Kind
	Message string
	// Usage is the session's run-cumulative snapshot; UsageMeasured latches
	// true once any turn of the session had a figure (MS-10).
	Usage         Usage
	UsageMeasured bool
	Model         string
	// SpendUnaccounted is true when the turn reached a model and no figure
	// fully accounting for it arrived (MS-12).
	SpendUnaccounted bool
	// PermissionsRefused counts the permission requests this turn refused
	// (PM-1, PM-2, or a PermissionHook's refusal), and UpdatedAfterRefusal
	// is true when the runtime sent any session update after the last of
	// them other than a refused tool call's own or one announcing the
	// session's state (commands, mode, config, title, usage) (DI-11). The
	// outcome does not depend on them: a runtime that answers end_turn
	// right after a refusal completed its turn; these facts tell "it
	// carried on without the tool" from "it stopped at the refusal"
	// (PermissionsRefused > 0 and UpdatedAfterRefusal false).
	PermissionsRefused  int
	UpdatedAfterRefusal bool
}
