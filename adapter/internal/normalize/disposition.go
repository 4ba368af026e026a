package normalize

import (
	"strconv"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/contract"
)

// Outcome is how a turn ends: its terminal event type, error kind (empty on
// completion) and message.
type Outcome struct {
	Type    contract.EventType
	Kind    contract.Kind
	Message string
}

// The fixed disposition messages.
const (
	MsgTurnFailed        = "turn failed"
	MsgTurnCancelled     = "turn cancelled"
	MsgUnrequestedCancel = "agent reported a cancelled stop reason without a cancellation on either side"
	MsgUnrecognizedStop  = "agent reported an unrecognized stop reason: "
	MsgInputRequired     = "agent asked for a decision only a person can make"
	MsgTurnCompleted     = "turn completed"
)

// StopReason maps a session/prompt stopReason to the turn's outcome (DI-2).
// cancelRequested says whether either side asked for cancellation; the
// overrides of DI-1 are the caller's, applied before this table. reason is
// the value as sent, not a gen.StopReason: gen's closed enum rejects the
// unrecognized values DI-2 still reports.
func StopReason(reason string, cancelRequested bool) Outcome {
	switch gen.StopReason(reason) {
	case gen.StopReasonEndTurn:
		return Outcome{Type: contract.EventTurnCompleted, Message: MsgTurnCompleted}
	case gen.StopReasonRefusal:
		return Outcome{contract.EventTurnFailed, contract.KindTurnRefused, MsgTurnFailed}
	case gen.StopReasonMaxTokens:
		return Outcome{contract.EventTurnFailed, contract.KindTurnTokenLimit, MsgTurnFailed}
	case gen.StopReasonMaxTurnRequests:
		return Outcome{contract.EventTurnFailed, contract.KindTurnRequestLimit, MsgTurnFailed}
	case gen.StopReasonCancelled:
		if cancelRequested {
			return Cancelled()
		}
		return Outcome{contract.EventTurnFailed, contract.KindTurnFailed, MsgUnrequestedCancel}
	default:
		// DI-2: the whole message is capped (as Sortie does), not the
		// quoted value inside it.
		return Outcome{contract.EventTurnFailed, contract.KindTurnOutcomeUnknown, Cap(MsgUnrecognizedStop + strconv.Quote(reason))}
	}
}

// DetailRefusedPermission is DI-10's detail of the human-input message.
const DetailRefusedPermission = "a permission this unattended run refused"

// StopReasonAfterRefusal is StopReason for a turn in which nobody asked for
// cancellation. refusedPermission says whether the adapter refused a
// permission request during the turn (PM-1): a cancelled stop then is the
// runtime giving up on a consent this run cannot give, which needs a
// person rather than a retry (DI-10).
func StopReasonAfterRefusal(reason string, refusedPermission bool) Outcome {
	if reason == "cancelled" && refusedPermission {
		return InputRequired(DetailRefusedPermission)
	}
	return StopReason(reason, false)
}

// Cancelled is the outcome of a turn whose cancellation was requested.
func Cancelled() Outcome {
	return Outcome{contract.EventTurnCancelled, contract.KindTurnCancelled, MsgTurnCancelled}
}

// InputRequired is the outcome of a turn ended because the runtime asked for
// something only a person can give (DI-5); detail may be empty.
func InputRequired(detail string) Outcome {
	m := MsgInputRequired
	if detail != "" {
		m += ": " + detail
	}
	return Outcome{contract.EventTurnInputRequired, contract.KindTurnInputRequired, m}
}
