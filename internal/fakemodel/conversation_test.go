package fakemodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each API's conversation, read for its last user text and whether it
// ends with a tool's result.
func TestLastTurnOfEachAPI(t *testing.T) {
	for _, tc := range []struct {
		name, body, last string
		tool             bool
	}{
		{"chat, text", `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"second"}]}]}`, "second", false},
		{"chat, tool result", `{"messages":[{"role":"user","content":"write it"},{"role":"assistant","tool_calls":[{"id":"c"}]},{"role":"tool","tool_call_id":"c","content":"denied"}]}`, "write it", true},
		{"anthropic, tool result", `{"messages":[{"role":"user","content":[{"type":"text","text":"write it"}]},{"role":"assistant","content":[{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result","content":"denied"}]}]}`, "write it", true},
		{"responses, string input", `{"input":"just this"}`, "just this", false},
		{"responses, items", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"run"}]},{"type":"function_call"},{"type":"function_call_output","output":"x"}]}`, "run", true},
		{"gemini", `{"contents":[{"role":"user","parts":[{"text":"a"},{"text":"b"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"name":"f"}}]}]}`, "ab", true},
		{"not JSON", `nope`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Body: []byte(tc.body)}
			assert.Equal(t, tc.last, r.LastUserText())
			assert.Equal(t, tc.tool, r.EndsWithToolResult())
		})
	}
}
