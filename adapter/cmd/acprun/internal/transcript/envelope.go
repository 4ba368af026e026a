package transcript

import (
	"bytes"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/normalize"
)

// message is the part of a JSON-RPC message the replay and the timeline
// read. Members are read by their exact names (normalize.Member), as acpsdk
// and gen read them: "ID" or "Result" is another member, not the id or the
// result. The raw values share the line's bytes.
type message struct {
	ID     json.RawMessage // nil when absent
	Method string
	Params json.RawMessage
	Result json.RawMessage
	// Error is the error object; nil when absent or null.
	Error json.RawMessage
}

// readMessage reads line's envelope; false when line is not a JSON object
// or its method is not a string.
func readMessage(line []byte) (message, bool) {
	var m message
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' || !json.Valid(line) {
		return m, false
	}
	if raw, ok := normalize.Member(line, "method"); ok && string(raw) != "null" {
		method, ok := normalize.StringMember(line, "method")
		if !ok {
			return m, false
		}
		m.Method = method
	}
	m.ID, _ = normalize.Member(line, "id")
	m.Params, _ = normalize.Member(line, "params")
	m.Result, _ = normalize.Member(line, "result")
	if e, ok := normalize.Member(line, "error"); ok && string(e) != "null" {
		m.Error = e
	}
	return m, true
}

// isRequest reports a message with a method and a non-null id.
func (m message) isRequest() bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

// isResponse reports a message with an id and no method.
func (m message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// str is the string member name of the object obj; "" when there is none.
func str(obj []byte, name string) string {
	s, _ := normalize.StringMember(obj, name)
	return s
}

// member is the raw member name of the object obj; nil when there is none.
func member(obj []byte, name string) []byte {
	raw, _ := normalize.Member(obj, name)
	return raw
}
