// Package cli is acprun: it drives one session of an Agent Client Protocol
// runtime through Sortie's adapter and shows what the orchestrator would see,
// either as a live view for a person or as one JSON object per line for a
// script.
//
// The package talks to the adapter through the small [Runtime] interface so
// the view, the flags, the exit statuses and the interrupt handling are
// tested against a fake; the binding to the real adapter lives in the main
// package.
package cli

import (
	"context"

	"acpkit.dev/adapter"
)

// Session is the handle acprun keeps for one started session.
type Session struct {
	// ID is the session identifier the runtime created.
	ID string
	// AgentPID is the runtime's process id as a decimal string.
	AgentPID string
	// Handle is the implementation's own session value, passed back to it
	// untouched.
	Handle any
}

// Runtime is what acprun needs from the adapter: the three calls of Sortie's
// agent-adapter contract (spec §0).
type Runtime interface {
	// StartSession launches the runtime and opens a session. The returned
	// Session is passed to StopSession even when err is non-nil.
	StartSession(ctx context.Context, p adapter.StartParams) (Session, error)
	// RunTurn sends one prompt and returns when the turn has ended.
	RunTurn(ctx context.Context, s Session, p adapter.TurnParams) (adapter.TurnResult, error)
	// StopSession tears the session down; acprun calls it exactly once.
	StopSession(ctx context.Context, s Session) error
}

// RefagentSubcommand is the first argument that makes acprun run the
// reference agent on its standard input and output instead of a session:
// the runtime acprun drives when --command is absent, so an installed
// acprun needs nothing beside it.
const RefagentSubcommand = "refagent"

// ReplaySubcommand is the first argument that makes acprun a recorded
// runtime: `acprun replay FILE` plays the runtime's side of a --record
// transcript on its standard input and output.
const ReplaySubcommand = "replay"

// ShowSubcommand is the first argument that makes acprun print a --record
// transcript as a timeline: `acprun show FILE`.
const ShowSubcommand = "show"
