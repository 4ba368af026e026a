package cli

import (
	"strings"

	"acpkit.dev/adapter"
)

// noticeKind tells the readable view what a notification event is. The
// adapter reports its own notices and the agent's text through the same
// event type; the notices' texts are contract strings (spec §17, §18), so
// matching them exactly is reliable.
type noticeKind int

const (
	// noticeChunk is the empty notification each streamed text chunk emits (EV-3).
	noticeChunk noticeKind = iota
	// noticeAgentText is a completed agent message (EV-5).
	noticeAgentText
	// noticeRefused is a permission request the adapter refused (PM-1),
	// also on a --permissions policy's or a person's decision (PM-11).
	noticeRefused
	// noticeApproved is a permission request approved by a --permissions
	// policy or a person (PM-11).
	noticeApproved
	// noticeNeedsPerson is a request only a person could answer (PM-2, PM-3).
	noticeNeedsPerson
	// noticeGap is the once-per-session capability-gap notice (CAP-6).
	noticeGap
	// noticeToolGated is the once-per-session tool-gating notice (PM-9).
	noticeToolGated
)

// The adapter's notice texts (byte for byte from the spec).
const (
	msgRefused      = "refused a permission request because this run is unattended and no one can approve it"
	msgRefusedBy    = "refused a permission request: "
	msgApproved     = "approved a permission request: "
	msgNeedsGrant   = "the agent needs a permission this unattended run cannot grant"
	msgNeedsAnswer  = "the agent asked for something only a person could give, and this unattended run has no one to give it: "
	msgGapPrefix    = "this session started with a declared capability gap in: "
	msgToolGatedPre = "this session delivered tool servers and the agent runtime asked for consent before running a tool"
)

// classifyNotice sorts a notification's message into a noticeKind.
func classifyNotice(msg string) noticeKind {
	switch {
	case msg == "":
		return noticeChunk
	case msg == msgRefused, strings.HasPrefix(msg, msgRefusedBy):
		return noticeRefused
	case strings.HasPrefix(msg, msgApproved):
		return noticeApproved
	case msg == msgNeedsGrant, strings.HasPrefix(msg, msgNeedsAnswer):
		return noticeNeedsPerson
	case strings.HasPrefix(msg, msgGapPrefix):
		return noticeGap
	case strings.HasPrefix(msg, msgToolGatedPre):
		return noticeToolGated
	default:
		return noticeAgentText
	}
}

// msgStoppedAtRefusal says in words what DI-11's facts mean when a turn
// refused a permission and nothing followed the last refusal.
const msgStoppedAtRefusal = "the runtime stopped at a refused permission; nothing ran after it"

// stoppedAtRefusal reports a turn whose runtime stopped at a refused
// permission (DI-11): it refused one and sent nothing after the last.
func stoppedAtRefusal(r adapter.TurnResult) bool {
	return r.PermissionsRefused > 0 && !r.UpdatedAfterRefusal
}
