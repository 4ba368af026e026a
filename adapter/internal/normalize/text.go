// Package normalize holds the adapter's pure session logic: the mapping of
// session/update notifications onto Sortie's event vocabulary with message
// accumulation (spec §15), tool-call tracking (§16), permission option
// selection (§17), capability tracking (§18) and the stop-reason disposition
// table (§14). Nothing here touches a process or a connection, so every rule
// is testable on its own; the adapter's pump owns one of each per session.
package normalize

import (
	"bytes"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// MaxRunes is the cap on every agent-derived text the adapter reports.
const MaxRunes = 500

// Ellipsis marks a text cut at MaxRunes.
const Ellipsis = "…"

// Cap returns s unchanged when it has at most MaxRunes runes, else its first
// MaxRunes runes followed by Ellipsis.
func Cap(s string) string {
	if utf8.RuneCountInString(s) <= MaxRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxRunes {
			return s[:i] + Ellipsis
		}
		n++
	}
	return s
}

// ErrorText renders a JSON-RPC error for a message (HS-3): the error message,
// then ": " and the data value when data is present and not null (a JSON
// string is used raw, anything else as compacted JSON), capped at MaxRunes.
func ErrorText(message string, data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return Cap(message)
	}
	var s string
	if data[0] == '"' && json.Unmarshal(data, &s) == nil {
		return Cap(message + ": " + s)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		// Not valid JSON: the bytes are still the best description we have.
		return Cap(message + ": " + string(data))
	}
	return Cap(message + ": " + buf.String())
}
