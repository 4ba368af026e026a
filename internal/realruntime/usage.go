//go:build linux

package realruntime

import (
	"net/http"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/internal/fakemodel"
)

// Figure is a token figure as a measurement source reports it: input holds
// the cached tokens (cache-read among them), output the reasoning ones.
type Figure struct {
	Input, Output, Total, CacheRead int64
}

// Add is f with the figure of one call of kind that reported u added.
// Anthropic's input_tokens leave out the cache's reads and writes, which
// the figure's input holds; OpenAI's input_tokens and output_tokens
// already hold cached and reasoning tokens.
func (f Figure) Add(kind Kind, u fakemodel.Usage) Figure {
	in := u.Input
	if kind == ClaudeAgentACP {
		in += u.CacheRead + u.CacheWrite
	}
	f.Input += in
	f.Output += u.Output
	f.CacheRead += u.CacheRead
	f.Total = f.Input + f.Output
	return f
}

// SideCall reports whether r is a request of kind's own that writes no
// record a measurement source counts: claude-agent-acp's session title (it
// offers no tools) and prompt suggestion, codex-acp's session title (a
// JSON-schema answer, run in a thread of its own), and requests that are
// no model call (count_tokens, codex's WebSocket attempt).
func SideCall(kind Kind, r fakemodel.Request) bool {
	switch kind {
	case ClaudeAgentACP:
		return r.Path != "/v1/messages" || !r.OffersTools() || r.Contains("SUGGESTION MODE")
	case CodexACP:
		return r.Method != http.MethodPost || r.Contains(`"type":"json_schema"`)
	}
	return false
}

// Model is the model a request asked for, "" when its body names none.
func Model(r fakemodel.Request) string {
	var b struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(r.Body, &b)
	return b.Model
}
