package normalize

import (
	"time"

	"acpkit.dev/adapter/internal/contract"
)

// Event is one normalized event before the adapter stamps it with the
// session's identity.
type Event struct {
	Type    contract.EventType
	Time    time.Time
	Message string
	// ToolName, ToolDurationMS and ToolError are set on a tool_result.
	ToolName       string
	ToolDurationMS int64
	ToolError      bool
}

// The fixed messages of the event stream (EV-1, EV-10, PM-*).
const (
	MsgReasoningBlock      = "reasoning block"
	MsgPlanUpdate          = "plan update"
	MsgNonTextChunk        = "agent sent a message chunk this client does not render"
	MsgUnrecognizedUpdate  = "received a session update of an unrecognized kind"
	MsgUnparsableLine      = "received a line that could not be parsed as JSON-RPC"
	MsgPermissionRefused   = "refused a permission request because this run is unattended and no one can approve it"
	MsgPermissionNeeded    = "the agent needs a permission this unattended run cannot grant"
	MsgElicitation         = "the agent asked for something only a person could give, and this unattended run has no one to give it: an answer to a question"
	ElicitationDetail      = "an answer to a question"
	MsgUnimplementedMethod = "the agent called a method this client does not implement"
	MsgToolGated           = "this session delivered tool servers and the agent runtime asked for consent before running a tool; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it"
)
