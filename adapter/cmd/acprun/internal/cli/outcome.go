package cli

import (
	"time"

	"acpkit.dev/adapter"
)

// Exit statuses (issue #5). They are acprun's contract with scripts.
const (
	ExitCompleted     = 0 // every turn completed
	ExitUsage         = 2 // the command line could not run
	ExitStartFailed   = 3 // the session did not start
	ExitTurnFailed    = 4 // a turn failed (including a turn timeout)
	ExitCancelled     = 5 // cancelled by an interrupt
	ExitInputRequired = 6 // the run needs a person
)

// Exit reasons: the result line's exit_reason, one per exit status.
const (
	reasonCompleted     = "completed"
	reasonStartFailed   = "startup_failed"
	reasonTurnFailed    = "turn_failed"
	reasonCancelled     = "cancelled"
	reasonInputRequired = "input_required"
	// reasonResumeNotContinued: --resume-policy required and the saved
	// session was not continued (exit status 3).
	reasonResumeNotContinued = "resume_not_continued"
)

// turnReport is one finished turn as the views show it.
type turnReport struct {
	N       int // 1-based
	Outcome adapter.EventType
	Kind    adapter.Kind
	Message string
	// Detail is the returned error's full text (message and cause) when it
	// says more than Message; the readable view shows it.
	Detail string
	Took   time.Duration
	Result adapter.TurnResult
	// failure is the returned error's raw text, which hints match on.
	failure string
}

// runReport is the whole run, rendered by the views' closing summary and the
// JSON result line.
type runReport struct {
	Status    int
	Reason    string
	Kind      adapter.Kind
	Message   string
	SessionID string
	AgentPID  string
	// Command is the agent.command the run started.
	Command    string
	Turns      []turnReport
	StartTook  time.Duration
	StopTook   time.Duration
	TotalTook  time.Duration
	StopErr    error
	Skipped    int // prompts never sent because the run ended early
	Interrupts int
	// failure is the raw text of the error that ended the run.
	failure string
	// usage is a command-line error only the runtime could reveal (an
	// --auth-method it does not advertise): acprun exits 2 with it and
	// no view output.
	usage error
	// Detail is the whole error behind Message when it says more.
	Detail string
}

// statusOf maps a finished turn to its exit status and reason. A turn that
// completed maps to ExitCompleted; the kind decides the rest, falling back to
// the outcome event when the kind is missing.
func statusOf(t turnReport) (int, string) {
	switch {
	case t.Outcome == adapter.EventTurnCompleted && t.Kind == "":
		return ExitCompleted, reasonCompleted
	case t.Kind == adapter.KindTurnInputRequired,
		t.Kind == "" && t.Outcome == adapter.EventTurnInputRequired:
		return ExitInputRequired, reasonInputRequired
	case t.Kind == adapter.KindTurnCancelled,
		t.Kind == "" && t.Outcome == adapter.EventTurnCancelled:
		return ExitCancelled, reasonCancelled
	default:
		return ExitTurnFailed, reasonTurnFailed
	}
}
