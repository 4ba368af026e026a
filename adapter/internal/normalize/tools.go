package normalize

import (
	"time"

	"acpkit.dev/acpsdk/gen"

	"acpkit.dev/adapter/internal/contract"
)

// toolKinds is the closed set tool kinds normalize to (TC-3).
var toolKinds = map[string]bool{
	"read": true, "edit": true, "delete": true, "move": true, "search": true,
	"execute": true, "think": true, "fetch": true, "switch_mode": true, "other": true,
}

// ToolKind normalizes a declared tool kind to the closed set; an absent or
// unrecognised value is "other" (TC-3).
func ToolKind(kind string) string {
	if toolKinds[kind] {
		return kind
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
func (t *ToolTracker) Begin(id, kind string, at time.Time) {
	if t.calls == nil {
		t.calls = make(map[string]toolCall)
	}
	t.calls[id] = toolCall{kind: ToolKind(kind), begin: at}
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
		Message:        Cap(title),
		ToolName:       c.kind,
		ToolDurationMS: d,
		ToolError:      status == gen.ToolCallStatusFailed,
	}, true
}

// Open is the number of calls begun and not yet ended.
func (t *ToolTracker) Open() int { return len(t.calls) }
