package acpsdk

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
	"acpkit.dev/acpsdk/internal/surface"
)

// decodeTrustedResult decodes a result read from a validated line into a
// generated result type, of any surface, without validating it again; ok
// is false for null and for any other destination, which json.Unmarshal
// then handles. The strings it decodes share the line's bytes (a line is
// never written once read; see lineReader.next).
func decodeTrustedResult(result []byte, into any) (ok bool, err error) {
	if jsonx.IsNull(result) {
		return false, nil
	}
	return surface.DecodeResult(result, into)
}

// msgKind classifies one inbound line.
type msgKind uint8

const (
	kindInvalid      msgKind = iota // answered -32600 (or -32700), never dispatched
	kindRequest                     // method and id: answered
	kindNotification                // method, no id: never answered
	kindResponse                    // result or error, with an id
)

// wireMsg is the envelope as found, every member kept raw so that presence
// (absent vs null) and the peer's exact id bytes survive. refused names the
// first member the envelope stepped over without accepting it, and
// refusedErr says why (jsonx.ErrTooDeep or jsonx.ErrUTF8).
type wireMsg struct {
	JSONRPC, ID, Method, Params, Result, Error []byte
	refused                                    string
	refusedErr                                 error
}

// inMsg is a classified inbound message. Its raw slices alias the line they
// came from, which is never reused, so they may be kept.
type inMsg struct {
	kind msgKind
	// silent marks an invalid message that is never answered: it looks
	// like a response (an answer would carry the id of one of the peer's
	// own requests).
	silent bool
	// refused is why a response or notification is not delivered as read
	// (its member was refused; see wireMsg): a notification is reported
	// with it, a response's call fails with it.
	refused error
	method  string
	id      json.RawMessage // exact bytes; nil when absent
	params  json.RawMessage
	result  json.RawMessage
	errObj  json.RawMessage
	// code and why say what is wrong with an invalid message (or, with
	// CodeInvalidParams, with a request's params).
	code int64
	why  string
}

// paramsRefused is the error params the envelope refused (cause) are
// answered or reported with: -32602, as the generated decoders, which
// refuse the same params, answer them.
func paramsRefused(cause error) *Error {
	return &Error{Code: CodeInvalidParams, Message: ErrInvalidParams.Message + ": params: " + cause.Error(), Data: json.RawMessage(`{"path":"params"}`), cause: cause}
}

// nullResult is the result of a response that carries neither result nor
// error (what JavaScript writes for result: undefined).
var nullResult = json.RawMessage("null")

// classify validates and classifies one line (SDK-10) in one pass; method
// is the reader's last method name, kept to intern the next one (nil keeps
// none). It never fails: a bad line comes back as kindInvalid with the code to
// answer (-32700 for a line that is not JSON, -32600 for JSON that is not a
// message, -32602 for a request whose params nest too deep or are not
// UTF-8) and, when the peer's id could be read, that id for the answer.
func classify(line []byte, nullIDIsNotification bool, method *string) inMsg {
	w, err := envelope(line)
	if errors.Is(err, errNotObject) {
		if jsonx.Validate(line) != nil {
			return inMsg{code: CodeParseError, why: "line is not JSON"}
		}
		return inMsg{code: CodeInvalidRequest, why: "not a JSON-RPC object (batches are not supported)"}
	}
	if err != nil {
		return inMsg{code: CodeParseError, why: "line is not JSON"}
	}
	if isNull(w.Error) && w.Result != nil {
		w.Error = nil // JSON-RPC 1.0 style: "error": null beside the result
	}
	m := inMsg{params: w.Params, result: w.Result, errObj: w.Error}
	if w.JSONRPC != nil && !bytes.Equal(w.JSONRPC, []byte(`"2.0"`)) {
		m.code, m.why = CodeInvalidRequest, `"jsonrpc" is not "2.0"`
		m.id = validID(w.ID)
		return m
	}
	if w.ID != nil {
		if validID(w.ID) == nil {
			m.code, m.why = CodeInvalidRequest, "id is not a number, string or null"
			return m
		}
		m.id = w.ID
	}
	switch w.refused {
	case "", "params", "result", "error":
	default:
		// A member the envelope does not use: nothing can be answered
		// about it but the line.
		if errors.Is(w.refusedErr, jsonx.ErrTooDeep) {
			return inMsg{code: CodeParseError, why: "line nests too deep"}
		}
		return inMsg{code: CodeParseError, why: "line is not JSON"}
	}
	if w.Method != nil {
		if w.Result != nil || w.Error != nil {
			m.code, m.why = CodeInvalidRequest, "message has both a method and a result or error"
			return m
		}
		if len(w.Method) < 2 || w.Method[0] != '"' {
			m.code, m.why = CodeInvalidRequest, "method is not a string"
			return m
		}
		m.method = unquote(w.Method, method)
		if m.method == "" {
			m.code, m.why = CodeInvalidRequest, "method is empty"
			return m
		}
		if isNull(m.params) {
			m.params = nil // "params": null is read as no params, as most peers do
		}
		if p := m.params; p != nil && p[0] != '{' && p[0] != '[' {
			m.code, m.why = CodeInvalidRequest, "params is not an object or array"
			return m
		}
		switch {
		case m.id == nil:
			m.kind = kindNotification
		case isNull(m.id) && (nullIDIsNotification || notificationMethods[m.method]):
			// A method the schema makes a notification is one with
			// "id": null too (Sortie's EV-12): never answered.
			m.kind, m.id = kindNotification, nil
		default:
			m.kind = kindRequest
		}
		if w.refused == "params" {
			// The decoders refuse such params (gen.DispatchClient with
			// -32602); so does the connection, before any handler.
			e := paramsRefused(w.refusedErr)
			m.params = nil
			m.refused = e
			if m.kind == kindRequest {
				m.kind, m.refused = kindInvalid, nil
				m.code, m.why = CodeInvalidParams, e.Message
			}
		}
		return m
	}
	if w.ID != nil {
		// Without a method, an id marks a response, even one that has
		// neither result nor error: it is never answered.
		if w.Result == nil && w.Error == nil {
			m.result = nullResult
		}
		if w.refused != "" {
			m.result, m.errObj = nil, nil
			m.refused = fmt.Errorf("%w: %s: %w", ErrMalformedResponse, w.refused, w.refusedErr)
		}
		// With both members the error wins: the caller learns the call
		// failed instead of waiting for an answer that already came.
		m.kind = kindResponse
		return m
	}
	if w.Result != nil || w.Error != nil {
		m.code, m.why, m.silent = CodeInvalidRequest, "response has no id", true
		return m
	}
	m.code, m.why = CodeInvalidRequest, "object is neither a request, a notification nor a response"
	return m
}

// validID returns id when it is a JSON-RPC id (number, string or null), else
// nil.
func validID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	switch c := id[0]; {
	case c == '"', c == 'n', c == '-', c >= '0' && c <= '9':
		return id
	}
	return nil
}

func isNull(b []byte) bool { return len(b) == 4 && string(b) == "null" }

// notificationMethods are the schema's notifications: one of them carrying
// "id": null is still a notification.
var notificationMethods = func() map[string]bool {
	m := make(map[string]bool)
	for _, mi := range gen.Methods {
		if mi.Notification {
			m[mi.Name] = true
		}
	}
	return m
}()

// knownMethods interns the schema's method names, so decoding the method of
// a message costs no allocation on the hot path.
var knownMethods = func() map[string]string {
	m := make(map[string]string, len(gen.Methods))
	for _, mi := range gen.Methods {
		m[mi.Name] = mi.Name
	}
	return m
}()

// unquote decodes a JSON string, a method name. The name last decoded
// (*last, when last is not nil) and the schema's names cost no allocation;
// another escape-free string costs one. A stream is mostly one method
// (session/update), and comparing with the last name is cheaper than
// looking it up; a raw name equal to the last one has no escape, since
// the last one is kept only when its raw form had none.
func unquote(raw []byte, last *string) string {
	body := raw[1 : len(raw)-1]
	if last != nil && *last != "" && string(body) == *last {
		return *last
	}
	if bytes.IndexByte(body, '\\') < 0 {
		s, ok := knownMethods[string(body)]
		if !ok {
			s = string(body)
		}
		if last != nil {
			*last = s
		}
		return s
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

// parseOutgoingID reads an id we issued (a positive decimal integer) from a
// response; anything else cannot match a call of ours.
func parseOutgoingID(id []byte) (int64, bool) {
	if len(id) == 0 || len(id) > 18 || id[0] < '1' || id[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return n, err == nil
}

// decodeErrorObject decodes a response's error member.
func decodeErrorObject(raw []byte) (*Error, error) {
	var e Error
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%w: error member is not an object", ErrMalformedResponse)
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedResponse, err)
	}
	return &e, nil
}

// Outgoing messages are built by appending into one buffer: the envelope by
// hand, the payload by segmentio/encoding. Every frame ends with "\n".

var jsonrpcPrefix = []byte(`{"jsonrpc":"2.0"`)

func appendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	b = append(b, jsonrpcPrefix...)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return appendCall(b, method, params)
}

func appendNotification(b []byte, method string, params any) ([]byte, error) {
	b = append(b, jsonrpcPrefix...)
	return appendCall(b, method, params)
}

func appendCall(b []byte, method string, params any) ([]byte, error) {
	b = append(b, `,"method":`...)
	b = json.AppendEscape(b, method, 0)
	if params != nil {
		b = append(b, `,"params":`...)
		var err error
		if b, err = json.Append(b, params, 0); err != nil {
			return nil, fmt.Errorf("acpsdk: encoding %s params: %w", method, err)
		}
	}
	return finishFrame(append(b, '}'))
}

func appendResult(b []byte, id json.RawMessage, result any) ([]byte, error) {
	b = append(b, jsonrpcPrefix...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	var err error
	if b, err = json.Append(b, result, 0); err != nil {
		return nil, fmt.Errorf("acpsdk: encoding result: %w", err)
	}
	return finishFrame(append(b, '}'))
}

func appendError(b []byte, id json.RawMessage, e *Error) []byte {
	b = append(b, jsonrpcPrefix...)
	b = append(b, `,"id":`...)
	if id == nil {
		id = json.RawMessage("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = json.AppendEscape(b, e.Message, 0)
	if len(e.Data) > 0 {
		if data, err := json.Append(nil, e.Data, 0); err == nil {
			b = append(b, `,"data":`...)
			b = append(b, data...)
		}
	}
	b = append(b, "}}"...)
	out, err := finishFrame(b)
	if err != nil {
		// Only Data can make the frame bad, and it was validated; keep
		// the code and message.
		return appendError(b[:0], id, &Error{Code: e.Code, Message: e.Message})
	}
	return out
}

// errNewlineInFrame is returned when an encoded frame holds a raw newline
// that compaction could not remove.
var errNewlineInFrame = errors.New("acpsdk: encoded message is not a single line")

// finishFrame makes sure the frame is one line: string encoding escapes
// newlines, but a MarshalJSON or RawMessage payload may carry formatting
// whitespace, which is compacted away (the rare, slow path).
func finishFrame(b []byte) ([]byte, error) {
	if bytes.IndexByte(b, '\n') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return nil, fmt.Errorf("acpsdk: compacting message: %w", err)
		}
		if bytes.IndexByte(buf.Bytes(), '\n') >= 0 {
			return nil, errNewlineInFrame
		}
		b = buf.Bytes()
	}
	return append(b, '\n'), nil
}
