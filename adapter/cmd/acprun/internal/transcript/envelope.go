package transcript

import (
	"acpkit.dev/adapter/internal/normalize"
)

// message is the part of a JSON-RPC message the replay and the timeline
// read: its envelope, members by their exact names (normalize.ReadEnvelope),
// as acpsdk and gen read them: "ID" or "Result" is another member, not the
// id or the result.
type message = normalize.Envelope

// readMessage reads line's envelope; false when line is not a JSON object
// or its method is not a string.
func readMessage(line []byte) (message, bool) { return normalize.ReadEnvelope(line) }

// isRequest reports a message with a method and a non-null id.
func isRequest(m message) bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

// isResponse reports a message with an id and no method.
func isResponse(m message) bool { return m.Method == "" && len(m.ID) > 0 }

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
