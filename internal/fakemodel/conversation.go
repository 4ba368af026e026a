package fakemodel

import (
	"strings"

	"github.com/segmentio/encoding/json"
)

// A script usually decides by the turn it is in, not by the whole
// conversation a request carries: a later turn's request repeats every
// earlier prompt. So a Request also reads, for each API, the last message
// of the conversation: the text of the last user message, and whether the
// conversation ends with a tool's result (the runtime reporting back on a
// tool the model asked for).

// LastUserText is the text of the conversation's last user message that
// has text (a message carrying only tool results does not count), or "".
func (r Request) LastUserText() string {
	text, _ := r.lastTurn()
	return text
}

// EndsWithToolResult reports whether the conversation's last message is
// a tool's result.
func (r Request) EndsWithToolResult() bool {
	_, tool := r.lastTurn()
	return tool
}

// message is one message of a conversation, as the four APIs write it
// (the members of all four side by side; each API fills its own).
type message struct {
	Type    string          `json:"type"` // Responses input items
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of parts
	Parts   []part          `json:"parts"`   // Gemini
}

// part is one part of a message's content.
type part struct {
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

// lastTurn reads the request's conversation: "messages" (chat completions,
// Anthropic), "input" (Responses) or "contents" (Gemini).
func (r Request) lastTurn() (text string, endsWithToolResult bool) {
	var body struct {
		Messages []message       `json:"messages"`
		Input    json.RawMessage `json:"input"`
		Contents []message       `json:"contents"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return "", false
	}
	msgs := body.Messages
	if len(body.Contents) > 0 {
		msgs = body.Contents
	}
	if len(body.Input) > 0 {
		var s string
		if json.Unmarshal(body.Input, &s) == nil {
			return s, false
		}
		_ = json.Unmarshal(body.Input, &msgs)
	}
	if len(msgs) > 0 {
		endsWithToolResult = msgs[len(msgs)-1].toolResult()
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" {
			continue
		}
		if t := m.text(); t != "" {
			return t, endsWithToolResult
		}
	}
	return "", endsWithToolResult
}

// toolResult reports whether m carries a tool's result.
func (m message) toolResult() bool {
	switch {
	case m.Role == "tool", m.Type == "function_call_output":
		return true
	}
	for _, p := range m.parts() {
		if p.Type == "tool_result" || len(p.FunctionResponse) > 0 {
			return true
		}
	}
	return false
}

// text joins m's text parts.
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var b strings.Builder
	for _, p := range m.parts() {
		switch p.Type {
		case "", "text", "input_text":
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// parts are m's content parts, wherever the API keeps them.
func (m message) parts() []part {
	if len(m.Parts) > 0 {
		return m.Parts
	}
	var ps []part
	_ = json.Unmarshal(m.Content, &ps)
	return ps
}
