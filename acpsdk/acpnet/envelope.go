package acpnet

import (
	"bytes"
	"errors"
	"strconv"
	"unsafe"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// A transport reads a little of each message to route it: whether it is a
// request, a notification or a response, its id, its method, and the
// session it belongs to (params.sessionId, or a result's sessionId). The
// connection still validates and decodes the whole message; this is only
// the envelope, read in one pass.

// msgShape is what a message's top-level JSON value is.
type msgShape uint8

const (
	shapeInvalid msgShape = iota // not JSON
	shapeObject
	shapeArray
	shapeOther // JSON, but a string, number, literal
)

// envelope is the routing view of one message. Its byte slices and its
// strings alias the message (the strings too: reading them costs no
// allocation per message): clone what is kept beyond the message.
type envelope struct {
	shape msgShape
	// jsonrpc2 says "jsonrpc" is the string "2.0".
	jsonrpc2 bool
	// id is the raw id value; nil when absent.
	id []byte
	// method is the method name when "method" is a string; hasMethod says
	// the member is present at all.
	method    string
	hasMethod bool
	hasResult bool
	hasError  bool
	// sessionID is params.sessionId, resultSessionID result.sessionId,
	// each when a string.
	sessionID       string
	hasSessionID    bool
	resultSessionID string
}

// isRequest reports a request as the TypeScript SDK sees one: "jsonrpc"
// "2.0", a string method and an id that is a string, a number or null.
func (e *envelope) isRequest() bool {
	return e.jsonrpc2 && e.hasMethod && e.method != "" && e.id != nil && validID(e.id)
}

// isNotification: "jsonrpc" "2.0", a string method, no id.
func (e *envelope) isNotification() bool {
	return e.jsonrpc2 && e.hasMethod && e.id == nil
}

// isResponse: no method and an id (the connection checks the rest).
func (e *envelope) isResponse() bool {
	return !e.hasMethod && e.id != nil
}

// isResponseShaped: no method, and an id, a result or an error.
func (e *envelope) isResponseShaped() bool {
	return !e.hasMethod && (e.id != nil || e.hasResult || e.hasError)
}

// validID reports an id JSON-RPC allows: a string, a number or null.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == 'n':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		return true
	}
	return false
}

// idKey is the map key of an id: ids that differ in type never collide
// (the string "1" is not the number 1). ok is false for an id that is not
// a string, a number or null.
func idKey(raw []byte) (key string, ok bool) {
	if !validID(raw) {
		return "", false
	}
	if raw[0] == '"' {
		s, err := unquote(raw)
		if err != nil {
			return "", false
		}
		return "s" + s, true
	}
	return "n" + string(raw), true
}

// idLength is how long an id is, in the characters the TypeScript SDK
// counts for its bound (UTF-16 code units, here UTF-8 bytes of the
// decoded string: the same for ASCII, a stricter bound otherwise);
// numbers and null are short.
func idLength(raw []byte) int {
	if len(raw) == 0 || raw[0] != '"' {
		return 0
	}
	s, err := unquote(raw)
	if err != nil {
		return len(raw)
	}
	return len(s)
}

var (
	errSyntax    = errors.New("not JSON")
	errNotObject = errors.New("not a JSON object")
)

// scanEnvelope reads msg's envelope. With validate, msg must be exactly
// one valid JSON value (a value nested deeper than the decoders allow is
// stepped over, as the connection does, and left to it); errSyntax says
// it is not JSON. Without validate, msg is trusted to be JSON (a line the
// local connection wrote) and is only scanned; input that is not JSON
// then yields some envelope, never a panic.
func scanEnvelope(msg []byte, validate bool) (envelope, error) {
	var e envelope
	i := jsonx.SkipSpace(msg, 0)
	if i >= len(msg) {
		return e, errSyntax
	}
	switch msg[i] {
	case '{':
	case '[':
		e.shape = shapeArray
		if validate && !jsonx.Valid(msg) {
			e.shape = shapeInvalid
			return e, errSyntax
		}
		return e, errNotObject
	default:
		e.shape = shapeOther
		if validate && !jsonx.Valid(msg) {
			e.shape = shapeInvalid
			return e, errSyntax
		}
		return e, errNotObject
	}
	end, err := eachMember(msg, i, validate, func(key, val []byte) {
		switch string(key) {
		case "jsonrpc":
			e.jsonrpc2 = string(val) == `"2.0"`
		case "id":
			e.id = val
		case "method":
			e.hasMethod = true
			e.method = ""
			if len(val) > 0 && val[0] == '"' {
				e.method, _ = unquoteAlias(val)
			}
		case "params":
			e.sessionID, e.hasSessionID = memberString(val, "sessionId")
		case "result":
			e.hasResult = true
			e.resultSessionID, _ = memberString(val, "sessionId")
		case "error":
			e.hasError = true
		}
	})
	if err == nil && jsonx.SkipSpace(msg, end) != len(msg) {
		err = errSyntax
	}
	if err != nil {
		return envelope{shape: shapeInvalid}, errSyntax
	}
	e.shape = shapeObject
	return e, nil
}

// eachMember walks the object starting at msg[i] == '{', calling f with
// each member's raw key (unescaped) and value, and returns the offset past
// the object. With validate, every value is validated as it is stepped
// over.
func eachMember(msg []byte, i int, validate bool, f func(key, val []byte)) (int, error) {
	i = jsonx.SkipSpace(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(msg) || msg[i] != '"' {
			return i, errSyntax
		}
		keyEnd, escaped, err := jsonx.ScanString(msg, i)
		if err != nil {
			return i, errSyntax
		}
		key := msg[i+1 : keyEnd-1]
		if escaped {
			k, err := unquote(msg[i:keyEnd])
			if err != nil {
				return i, errSyntax
			}
			key = []byte(k)
		}
		i = jsonx.SkipSpace(msg, keyEnd)
		if i >= len(msg) || msg[i] != ':' {
			return i, errSyntax
		}
		i = jsonx.SkipSpace(msg, i+1)
		valEnd, err := skipValue(msg, i, validate)
		if err != nil {
			return i, err
		}
		f(key, msg[i:valEnd])
		i = jsonx.SkipSpace(msg, valEnd)
		switch {
		case i < len(msg) && msg[i] == '}':
			return i + 1, nil
		case i < len(msg) && msg[i] == ',':
			i = jsonx.SkipSpace(msg, i+1)
		default:
			return i, errSyntax
		}
	}
}

// skipValue returns the offset past the value at msg[i].
func skipValue(msg []byte, i int, validate bool) (int, error) {
	if !validate {
		n, err := jsonx.Skip(msg[i:])
		if err != nil || n <= 0 {
			return i, errSyntax
		}
		return i + n, nil
	}
	end, err := jsonx.ValidateValue(msg, i)
	if errors.Is(err, jsonx.ErrTooDeep) {
		// As the connection does: step over it; the connection refuses
		// the message when it reads that member.
		n, skipErr := jsonx.Skip(msg[i:])
		if skipErr != nil || n <= 0 {
			return i, errSyntax
		}
		return i + n, nil
	}
	if err != nil {
		return i, errSyntax
	}
	return end, nil
}

// memberString returns obj[key] when obj is an object and that member a
// string (the last one, as JSON.parse keeps). obj is already validated, or
// trusted.
func memberString(obj []byte, key string) (string, bool) {
	if len(obj) == 0 || obj[0] != '{' {
		return "", false
	}
	var (
		s  string
		ok bool
	)
	_, _ = eachMember(obj, 0, false, func(k, v []byte) {
		if string(k) == key {
			s, ok = "", false
			if len(v) > 0 && v[0] == '"' {
				if u, err := unquoteAlias(v); err == nil {
					s, ok = u, true
				}
			}
		}
	})
	return s, ok
}

// unquoteAlias decodes a JSON string token; without escapes the string
// shares tok's bytes, so it must not outlive them (strings.Clone it).
func unquoteAlias(tok []byte) (string, error) {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' && bytes.IndexByte(tok, '\\') < 0 {
		body := tok[1 : len(tok)-1]
		if len(body) == 0 {
			return "", nil
		}
		return unsafe.String(&body[0], len(body)), nil
	}
	return unquote(tok)
}

// unquote decodes a JSON string token into a string of its own.
func unquote(tok []byte) (string, error) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", errSyntax
	}
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

// oneLine makes a valid JSON message fit on one NDJSON line: a raw line
// break in valid JSON can only be whitespace, so it becomes a space. msg
// is changed in place.
func oneLine(msg []byte) []byte {
	for i, c := range msg {
		if c == '\n' || c == '\r' {
			msg[i] = ' '
		}
	}
	return msg
}

// errorLine is a JSON-RPC error response, as one line with its newline.
// id is raw JSON (nil is null); data, when not nil, is raw JSON.
func errorLine(id []byte, code int, message string, data []byte) []byte {
	b := make([]byte, 0, 96+len(id)+len(message)+len(data))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, id...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, message)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}\n"...)
}
