package acpnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// FuzzSSEParser feeds any bytes to the event-stream parser, whole and a
// byte at a time: it never panics, every event is within the bound, and
// how the stream is cut into reads changes nothing.
func FuzzSSEParser(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n",
		"data:x\r\n\r\ndata: y\rdata: z\r\r",
		"\xef\xbb\xbfdata: a\n: c\nevent: e\nid: 1\nretry: 2\n\n",
		"data: a\ndata: b\n\ndata: c",
		"data: " + string(bytes.Repeat([]byte("x"), 80)) + "\n\n",
		"\r\n\r\r\n",
	} {
		f.Add([]byte(s))
	}
	const max = 64
	parse := func(in []byte, step int) ([]string, error) {
		p := sseParser{max: max}
		var events []string
		emit := func(d []byte) error {
			if len(d) > max {
				return errors.New("an event over the bound")
			}
			events = append(events, string(d))
			return nil
		}
		for len(in) > 0 {
			k := min(step, len(in))
			if err := p.feed(in[:k], emit); err != nil {
				return events, err
			}
			in = in[k:]
		}
		return events, p.end(emit)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, errWhole := parse(in, len(in)+1)
		bytewise, errBytes := parse(in, 1)
		if (errWhole == nil) != (errBytes == nil) {
			t.Fatalf("errors differ: whole %v, byte by byte %v", errWhole, errBytes)
		}
		if errWhole != nil {
			if !errors.Is(errWhole, ErrMessageTooLarge) {
				t.Fatalf("unexpected error %v", errWhole)
			}
			return
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("events differ: %q vs %q", whole, bytewise)
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("event %d differs: %q vs %q", i, whole[i], bytewise[i])
			}
		}
	})
}

// FuzzEnvelope checks the routing view against encoding/json: validation
// agrees, and for a valid object the id, method and session ids read are
// the ones encoding/json decodes. Unvalidated scanning never panics.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1"}}`,
		`{"id":"x\"y","result":{"sessionId":"n\u00e9w"}}`,
		`{"method":"m","params":{"a":{"sessionId":"inner"},"sessionId":1}}`,
		`[1,2]`, `"s"`, `{`, `{"a":1}}`, ` {"a" : [ {} ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = scanEnvelope(in, false) // never panics
		env, err := scanEnvelope(in, true)
		valid := jsonx.Valid(in)
		if valid && errors.Is(err, errSyntax) && !bytes.Contains(in, []byte("[[[[")) && !bytes.Contains(in, []byte("{{{{")) {
			t.Fatalf("valid JSON %q taken for not JSON", in)
		}
		if !valid && err == nil {
			t.Fatalf("invalid JSON %q taken for an object", in)
		}
		if err != nil || env.shape != shapeObject {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(in, &m) != nil {
			return // encoding/json is stricter in places (duplicate handling is the same)
		}
		if m.Method != nil && env.method != *m.Method {
			t.Fatalf("method %q, encoding/json %q", env.method, *m.Method)
		}
		var p struct {
			SessionID *string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.SessionID != nil && env.sessionID != *p.SessionID {
			t.Fatalf("params.sessionId %q, encoding/json %q", env.sessionID, *p.SessionID)
		}
	})
}

// FuzzWebSocketFrames runs any frame through the server's decisions,
// before and after initialize, and the client's: nothing panics, a line
// handed on is one line ending in a newline (valid JSON stays valid),
// and every reply is a JSON-RPC error.
func FuzzWebSocketFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialize"}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		"{\"jsonrpc\":\n\"2.0\",\"id\":2,\"result\":{}}",
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, `5`, ``, ` `, "{\n", `{"id":"` + string(bytes.Repeat([]byte("i"), 40)) + `"}`,
	} {
		f.Add([]byte(s))
	}
	checkLine := func(t *testing.T, in, line []byte) {
		if len(line) == 0 || line[len(line)-1] != '\n' || bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
			t.Fatalf("not one line: %q", line)
		}
		if jsonx.Valid(in) && !jsonx.Valid(line) {
			t.Fatalf("valid %q became invalid %q", in, line)
		}
	}
	checkReply := func(t *testing.T, reply []byte) {
		var m struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(reply, &m) != nil || m.Error == nil {
			t.Fatalf("reply %q is not an error response", reply)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		act, reply, line, _, _ := firstFrame(bytes.Clone(in))
		switch act {
		case frameReply:
			checkReply(t, reply)
		case frameInitialize:
			checkLine(t, in, line)
		}
		act, reply, line = laterFrame(bytes.Clone(in), 32)
		switch act {
		case frameReply:
			checkReply(t, reply)
		case frameForward:
			checkLine(t, in, line)
		}
		line, reply = frameLine(bytes.Clone(in))
		if reply != nil {
			checkReply(t, reply)
		} else {
			checkLine(t, in, line)
		}
	})
}
