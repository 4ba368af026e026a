package normalize

import (
	"bytes"

	"github.com/segmentio/encoding/json"
)

// Member returns the raw value of the member called name in the JSON
// object obj, and whether there is one. Names match exactly, as the
// generated decoders match them: "SESSIONID" is another member than
// "sessionId" (a name written with escapes is compared unescaped). Of
// duplicates the last counts. It is the one way the adapter reads a
// protocol message's members itself (EV-9, EV-10, DI-2, PM-1, SS-1, MS-5),
// and it copies nothing: the value shares obj's bytes.
//
// obj comes from a line the connection validated; on other bytes Member
// never panics, and finds a member only where the object is well formed up
// to the end of that member's value.
func Member(obj []byte, name string) ([]byte, bool) {
	var found []byte
	ok := members(obj, '{', func(key, value []byte) {
		if nameIs(key, name) {
			found = value
		}
	})
	if !ok || found == nil {
		return nil, false
	}
	return found, true
}

// Elements calls each with the raw value of every element of the JSON
// array arr, in order, and reports whether arr is an array.
func Elements(arr []byte, each func(value []byte)) bool {
	return members(arr, '[', func(_, value []byte) { each(value) })
}

// members walks the object ('{') or array ('[') in b, calling f with each
// member's raw name (with its quotes; nil in an array) and raw value.
func members(b []byte, open byte, f func(key, value []byte)) bool {
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != open {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return true
	}
	for i < len(b) {
		var key []byte
		if open == '{' {
			end := skipString(b, i)
			if end < 0 {
				return false
			}
			key = b[i:end]
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return false
			}
			i = skipSpace(b, i+1)
		}
		end := skipValue(b, i)
		if end < 0 {
			return false
		}
		f(key, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closer:
			return true
		default:
			return false
		}
	}
	return false
}

// nameIs reports whether the raw member name key (with its quotes) is
// name; only a name with escapes is decoded, so a comparison costs no
// allocation.
func nameIs(key []byte, name string) bool {
	if len(key) < 2 {
		return false
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key[1:len(key)-1]) == name
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i], -1 when
// there is none.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], -1 when
// it does not end in b. Containers are matched by their brackets, strings
// skipped whole; a scalar runs to the next delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// stringValue decodes a raw JSON string value; false for anything else.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// StringMember is Member for a member whose value must be a string.
func StringMember(obj []byte, name string) (string, bool) {
	raw, ok := Member(obj, name)
	if !ok {
		return "", false
	}
	return stringValue(raw)
}

// Envelope is the JSON-RPC envelope of one message, its members read by
// their exact names in one walk (as Member reads them). The raw values
// share the line's bytes; each is nil when absent.
type Envelope struct {
	ID     []byte
	Method string // "" when absent or null
	Params []byte
	Result []byte
	Error  []byte // nil when absent or null
}

// ReadEnvelope reads line's envelope; false when line is not a valid JSON
// object or its method is neither a string nor null.
func ReadEnvelope(line []byte) (Envelope, bool) {
	var e Envelope
	if !json.Valid(line) {
		return e, false
	}
	var method []byte
	ok := members(line, '{', func(key, value []byte) {
		switch {
		case nameIs(key, "id"):
			e.ID = value
		case nameIs(key, "method"):
			method = value
		case nameIs(key, "params"):
			e.Params = value
		case nameIs(key, "result"):
			e.Result = value
		case nameIs(key, "error"):
			e.Error = value
		}
	})
	if !ok {
		return e, false
	}
	if string(e.Error) == "null" {
		e.Error = nil
	}
	if method != nil && string(method) != "null" {
		if e.Method, ok = stringValue(method); !ok {
			return e, false
		}
	}
	return e, true
}
