package normalize

import (
	"strings"
	"time"

	"acpkit.dev/acpsdk/gen"

	"acpkit.dev/adapter/internal/contract"
)

// toolKinds is the closed set tool kinds normalize to (TC-3), each mapped to
// itself: the normalized kind is the set's own string, never the caller's.
var toolKinds = map[string]string{
	"read": "read", "edit": "edit", "delete": "delete", "move": "move", "search": "search",
	"execute": "execute", "think": "think", "fetch": "fetch", "switch_mode": "switch_mode", "other": "other",
}

// ToolKind normalizes a declared tool kind to the closed set; an absent or
// unrecognised value is "other" (TC-3).
func ToolKind(kind string) string {
	if k, ok := toolKinds[kind]; ok {
		return k
	}
	return "other"
}

type toolCall struct {
	kind  string
	begin time.Time
}

// ToolTracker correlates tool_call with its terminal tool_call_update
// (TC-1, TC-2). The zero value is ready to use.
type ToolTracker struct {
	calls map[string]toolCall
}

// Begin records a tool call under its id (TC-1). A repeated id restarts it.
// The tracker keeps its own copy of id (the caller's may share a line).
func (t *ToolTracker) Begin(id, kind string, at time.Time) {
	if t.calls == nil {
		t.calls = make(map[string]toolCall)
	}
	t.calls[strings.Clone(id)] = toolCall{kind: ToolKind(kind), begin: at}
}

// Update applies a tool_call_update. A terminal status (completed, failed)
// for a known id returns its tool_result and forgets the call; anything
// else returns false (TC-2).
func (t *ToolTracker) Update(id string, status gen.ToolCallStatus, title string, at time.Time) (Event, bool) {
	if status != gen.ToolCallStatusCompleted && status != gen.ToolCallStatusFailed {
		return Event{}, false
	}
	c, ok := t.calls[id]
	if !ok {
		return Event{}, false
	}
	delete(t.calls, id)
	d := max(at.Sub(c.begin).Milliseconds(), 0)
	return Event{
		Type:           contract.EventToolResult,
		Time:           at,
		Message:        strings.Clone(Cap(title)), // the caller's may share a line
		ToolName:       c.kind,
		ToolDurationMS: d,
		ToolError:      status == gen.ToolCallStatusFailed,
	}, true
}

// Open is the number of calls begun and not yet ended.
func (t *ToolTracker) Open() int { return len(t.calls) }
