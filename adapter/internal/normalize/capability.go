package normalize

import "strings"

// Capability is one entry of the session's capability record (CAP-1).
type Capability int

// The four entries, in their fixed order.
const (
	ToolServers Capability = iota
	TokenCounts
	SessionContinuation
	AgentVersion
	numCapabilities
)

var capabilityLabels = [numCapabilities]string{"tool servers", "token counts", "session continuation", "agent version"}

// String is the capability's label as the notice and logs spell it.
func (c Capability) String() string {
	if c < 0 || c >= numCapabilities {
		return "unknown"
	}
	return capabilityLabels[c]
}

// GapNoticePrefix starts the once-per-session capability notice (CAP-6).
const GapNoticePrefix = "this session started with a declared capability gap in: "

// Capabilities is the session's capability record: every entry starts
// resolved and can only be lowered (CAP-1). The zero value has every entry
// delivered.
type Capabilities struct {
	gap     [numCapabilities]bool
	noticed bool
}

// Lower puts c in the gap state. It reports true when the entry was
// delivered and the once-per-session notice has already gone out, the case
// the caller must log at Warn (CAP-7). Lowering a lowered entry is a no-op.
func (cs *Capabilities) Lower(c Capability) (warn bool) {
	if c < 0 || c >= numCapabilities || cs.gap[c] {
		return false
	}
	cs.gap[c] = true
	return cs.noticed
}

// Gap reports whether c is in the gap state.
func (cs *Capabilities) Gap(c Capability) bool {
	return c >= 0 && c < numCapabilities && cs.gap[c]
}

// Notice returns the capability gap notice the first time it is called with
// at least one entry in the gap (CAP-6), else false. Every later call
// returns false: the notice goes out once per session, and it is marked sent
// even when there was nothing to say, so a later lowering logs at Warn.
func (cs *Capabilities) Notice() (string, bool) {
	if cs.noticed {
		return "", false
	}
	cs.noticed = true
	var labels []string
	for c := range numCapabilities {
		if cs.gap[c] {
			labels = append(labels, c.String())
		}
	}
	if len(labels) == 0 {
		return "", false
	}
	return GapNoticePrefix + strings.Join(labels, ", "), true
}
