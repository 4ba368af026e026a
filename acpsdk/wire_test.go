package acpsdk

import (
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		kind   msgKind
		code   int64
		id     string // expected raw id; "" means nil
		method string
	}{
		{"request int id", `{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`, kindRequest, 0, `1`, "m"},
		{"request id 0", `{"jsonrpc":"2.0","id":0,"method":"m"}`, kindRequest, 0, `0`, "m"},
		{"request string id", `{"jsonrpc":"2.0","id":"a\"b","method":"m"}`, kindRequest, 0, `"a\"b"`, "m"},
		{"request null id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, kindRequest, 0, `null`, "m"},
		{"request float id kept exact", `{"jsonrpc":"2.0","id":1.50e1,"method":"m"}`, kindRequest, 0, `1.50e1`, "m"},
		{"notification", `{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}`, kindNotification, 0, "", "session/update"},
		{"escaped method", `{"jsonrpc":"2.0","method":"a\/b"}`, kindNotification, 0, "", "a/b"},
		{"params null is no params", `{"jsonrpc":"2.0","method":"m","params":null}`, kindNotification, 0, "", "m"},
		{"missing jsonrpc tolerated", `{"id":1,"method":"m"}`, kindRequest, 0, `1`, "m"},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, kindResponse, 0, `3`, ""},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, kindResponse, 0, `3`, ""},
		{"SDK10 not json", `{"jsonrpc":`, kindInvalid, CodeParseError, "", ""},
		{"SDK10 garbage", `hello`, kindInvalid, CodeParseError, "", ""},
		{"SDK10 trailing garbage", `{"id":1,"method":"m"} x`, kindInvalid, CodeParseError, "", ""},
		{"SDK10 array", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, kindInvalid, CodeInvalidRequest, "", ""},
		{"SDK10 scalar", `42`, kindInvalid, CodeInvalidRequest, "", ""},
		{"SDK10 empty object", `{}`, kindInvalid, CodeInvalidRequest, "", ""},
		{"SDK10 id only is a response with a null result", `{"jsonrpc":"2.0","id":9}`, kindResponse, 0, `9`, ""},
		{"SDK10 error null beside a result", `{"jsonrpc":"2.0","id":9,"result":1,"error":null}`, kindResponse, 0, `9`, ""},
		{"SDK10 params not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"m\",\"params\":[\"\xff\"]}", kindInvalid, CodeInvalidParams, `9`, "m"},
		{"SDK10 method not UTF-8 is not JSON", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xff\"}", kindInvalid, CodeParseError, "", ""},
		{"SDK10 params neither UTF-8 nor JSON", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"m\",\"params\":[\"\xff\",tru]}", kindInvalid, CodeParseError, "", ""},
		{"EV-12 null-id notification method", `{"jsonrpc":"2.0","id":null,"method":"session/update"}`, kindNotification, 0, "", "session/update"},
		{"SDK10 params too deep", `{"jsonrpc":"2.0","id":9,"method":"m","params":` + nested(jsonx.MaxDepth+1) + `}`, kindInvalid, CodeInvalidParams, `9`, "m"},
		{"SDK10 other member too deep", `{"jsonrpc":"2.0","id":9,"method":"m","x":` + nested(jsonx.MaxDepth+1) + `}`, kindInvalid, CodeParseError, "", ""},
		{"SDK10 wrong version", `{"jsonrpc":"1.0","id":9,"method":"m"}`, kindInvalid, CodeInvalidRequest, `9`, ""},
		{"SDK10 object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`, kindInvalid, CodeInvalidRequest, "", ""},
		{"SDK10 method not string", `{"jsonrpc":"2.0","id":2,"method":5}`, kindInvalid, CodeInvalidRequest, `2`, ""},
		{"SDK10 empty method", `{"jsonrpc":"2.0","id":2,"method":""}`, kindInvalid, CodeInvalidRequest, `2`, ""},
		{"SDK10 scalar params", `{"jsonrpc":"2.0","id":2,"method":"m","params":3}`, kindInvalid, CodeInvalidRequest, `2`, "m"},
		{"SDK10 method and result", `{"jsonrpc":"2.0","id":2,"method":"m","result":1}`, kindInvalid, CodeInvalidRequest, `2`, ""},
		{"response without id", `{"jsonrpc":"2.0","result":1}`, kindInvalid, CodeInvalidRequest, "", ""},
		{"response with result and error: error wins", `{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":1,"message":"m"}}`, kindResponse, 0, `4`, ""},
		{"case-sensitive members", `{"jsonrpc":"2.0","ID":1,"Method":"m"}`, kindInvalid, CodeInvalidRequest, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := classify([]byte(tt.line), false, nil)
			require.Equal(t, tt.kind, m.kind, "kind (why=%q)", m.why)
			require.Equal(t, tt.code, m.code)
			if tt.id == "" {
				require.Nil(t, m.id)
			} else {
				require.Equal(t, tt.id, string(m.id))
			}
			require.Equal(t, tt.method, m.method)
		})
	}
}

func TestClassifyNullIDAsNotification(t *testing.T) {
	m := classify([]byte(`{"jsonrpc":"2.0","id":null,"method":"m"}`), true, nil)
	require.Equal(t, kindNotification, m.kind)
	require.Nil(t, m.id)
}

func TestEncodeFrames(t *testing.T) {
	b, err := appendRequest(nil, 7, "session/prompt", json.RawMessage(`{"a" : [1, 2]}`))
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a" : [1, 2]}}`+"\n", string(b))

	b, err = appendNotification(nil, "n", nil)
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","method":"n"}`+"\n", string(b))

	// A payload with formatting newlines is compacted onto one line.
	b, err = appendResult(nil, json.RawMessage(`"x"`), json.RawMessage("{\n  \"a\": \"<b>\"\n}"))
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":"x","result":{"a":"<b>"}}`+"\n", string(b))

	_, err = appendResult(nil, json.RawMessage(`1`), json.RawMessage(`{"a":`))
	require.Error(t, err)

	b = appendError(nil, nil, &Error{Code: 500, Message: "line\nbreak", Data: json.RawMessage(`{"path":"/x"}`)})
	require.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":500,"message":"line\nbreak","data":{"path":"/x"}}}`+"\n", string(b))

	b = appendError(nil, json.RawMessage(`0`), &Error{Code: 1, Message: "m", Data: json.RawMessage(`{bad`)})
	require.Equal(t, `{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"m"}}`+"\n", string(b))
}

func TestErrorIsByCode(t *testing.T) {
	err := error(&Error{Code: CodeMethodNotFound, Message: "nope"})
	require.ErrorIs(t, err, ErrMethodNotFound)
	require.NotErrorIs(t, err, ErrInvalidParams)
	wrapped := &wrapErr{err}
	require.ErrorIs(t, wrapped, ErrMethodNotFound)
	e, ok := errorsAs(wrapped)
	require.True(t, ok)
	require.Equal(t, "nope", e.Message)

	// Any integer code round-trips through the decoder.
	for _, code := range []int64{500, -32099, 0, 1 << 40, -1 << 50} {
		raw, err := json.Marshal(&Error{Code: code, Message: "m"})
		require.NoError(t, err)
		got, err := decodeErrorObject(raw)
		require.NoError(t, err)
		require.Equal(t, code, got.Code)
	}
	_, err = decodeErrorObject([]byte(`"boom"`))
	require.ErrorIs(t, err, ErrMalformedResponse)
}

type wrapErr struct{ err error }

func (w *wrapErr) Error() string { return "wrapped: " + w.err.Error() }
func (w *wrapErr) Unwrap() error { return w.err }

func errorsAs(err error) (*Error, bool) {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil, false
		}
		err = u.Unwrap()
	}
	return nil, false
}

// FuzzClassify checks the dispatcher's message classification never panics
// and keeps its invariants for any line.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{}}}`,
		`{"jsonrpc":"2.0","id":"x","result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}`,
		`[1]`, `{}`, `nul`, `{"id":{},"method":1}`, `{"method":"\u0000"}`,
		`{"a\"b":"\\","id":[1,{"x":"]"}],"\u006dethod":"m" , "params" : {"s":"\"}"} }`,
	} {
		f.Add([]byte(s), false)
	}
	for _, s := range nestingSeeds() {
		for line := range strings.SplitSeq(s, "\n") {
			f.Add([]byte(line), false)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, nullNotif bool) {
		m := classify(line, nullNotif, nil)
		// The reader's interning of the last method name changes nothing.
		last := gen.MethodSessionUpdate
		require.Equal(t, m.method, classify(line, nullNotif, &last).method)
		// Differential check of the envelope walk against encoding/json:
		// for any valid object, the members found are exactly its members.
		var ref map[string]stdjson.RawMessage
		if jsonx.Validate(line) == nil && stdjson.Unmarshal(line, &ref) == nil && ref != nil {
			w, err := envelope(line)
			require.NoError(t, err)
			for name, got := range map[string][]byte{"jsonrpc": w.JSONRPC, "id": w.ID, "method": w.Method, "params": w.Params, "result": w.Result, "error": w.Error} {
				want, present := ref[name]
				require.Equal(t, present, got != nil, "member %s presence in %q", name, line)
				if present {
					require.Equal(t, string(want), string(got), "member %s", name)
				}
			}
		}
		switch m.kind {
		case kindRequest:
			require.NotEmpty(t, m.method)
			require.NotNil(t, validID(m.id))
			_, err := envelope(line)
			require.NoError(t, err)
			if m.params != nil {
				require.NoError(t, jsonx.Validate(m.params), "the dispatch trusts params the connection passed")
			}
		case kindNotification:
			require.NotEmpty(t, m.method)
			require.Nil(t, m.id)
		case kindResponse:
			require.NotNil(t, validID(m.id))
			require.True(t, m.result != nil || m.errObj != nil || m.refused != nil)
		case kindInvalid:
			require.Contains(t, []int64{CodeParseError, CodeInvalidRequest, CodeInvalidParams}, m.code)
			require.NotEmpty(t, m.why)
			if m.code == CodeInvalidRequest {
				_, err := envelope(line)
				if errors.Is(err, errNotObject) {
					err = jsonx.Validate(line)
				}
				require.NoError(t, err, "a -32600 line must be JSON")
			}
			if m.id != nil {
				require.NotNil(t, validID(m.id))
			}
			// The answer to a bad line is always one valid line.
			out := appendError(nil, m.id, &Error{Code: m.code, Message: m.why})
			require.True(t, json.Valid(out[:len(out)-1]), "%s", out)
		}
	})
}

// TestSDK10_MethodNamesInternedFromTheLastOne: the reader decodes a method
// name equal to the last one without allocating, and a different name is
// never mistaken for it.
func TestSDK10_MethodNamesInternedFromTheLastOne(t *testing.T) {
	var last string
	for _, method := range []string{gen.MethodSessionUpdate, "_vendor/x", "_vendor/x", gen.MethodSessionUpdate, "_vendor/y", "_vendor/x"} {
		line := []byte(`{"jsonrpc":"2.0","method":"` + method + `"}`)
		require.Equal(t, method, classify(line, false, &last).method)
		require.Equal(t, method, last)
	}
	unknown := []byte(`{"jsonrpc":"2.0","method":"_vendor/x"}`)
	require.Zero(t, testing.AllocsPerRun(100, func() { classify(unknown, false, &last) }))
}
