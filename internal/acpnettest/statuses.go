// Package acpnettest holds the raw-HTTP table of ACP's Streamable HTTP
// statuses (transport spec TR-1…TR-9), written once and run against every
// server acpkit serves or interoperates with: acpsdk/acpnet's Handler in
// its own tests, and the same Handler beside the TypeScript SDK's
// AcpServer in conformance/tsinterop, so any difference between the two
// is a failing test.
//
// It speaks plain net/http, never acpnet, so it tests the wire and not a
// client's reading of it.
package acpnettest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Server is an ACP endpoint to test. The agent behind Endpoint answers
// initialize and session/new, and answers session/prompt after at least
// one session/update for the session. The agent behind BrokenEndpoint
// fails to start: it never answers initialize.
type Server struct {
	Endpoint       string
	BrokenEndpoint string
}

// The requests the table sends.
const (
	InitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	newSessionBody = `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
)

// uuidV4 is the shape of a connection id (TR-2: TS answers UUID v4).
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Statuses runs the table against s, or only the rows of one requirement
// when only is set ("TR5" runs TR-5's); each row is a subtest named after
// the requirement it checks.
func Statuses(t *testing.T, s Server, only string) {
	ran := 0
	for _, row := range rows {
		if only != "" && !strings.HasPrefix(row.name, only+"_") {
			continue
		}
		ran++
		t.Run(row.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
			defer cancel()
			row.run(t, &raw{t: t, ctx: ctx, s: s})
		})
	}
	require.Positive(t, ran, "no row checks %s", only)
}

type row struct {
	name string
	run  func(t *testing.T, r *raw)
}

var rows = []row{
	// TR-1: one JSON message per POST, Content-Type application/json.
	{"TR1_TextPlainIs415", func(t *testing.T, r *raw) {
		r.expect(r.post(InitializeBody, "Content-Type", "text/plain"), 415)
	}},
	{"TR1_NoContentTypeIs415", func(t *testing.T, r *raw) {
		r.expect(r.post(InitializeBody), 415)
	}},
	{"TR1_MediaTypeCaseAndParameters", func(t *testing.T, r *raw) {
		resp := r.post(InitializeBody, "Content-Type", "Application/JSON; charset=utf-8")
		r.expect(resp, 200)
		r.delete(resp.Header.Get("Acp-Connection-Id"))
	}},
	{"TR1_AcceptNotChecked", func(t *testing.T, r *raw) {
		resp := r.post(InitializeBody, "Content-Type", "application/json", "Accept", "image/png")
		r.expect(resp, 200)
		r.delete(resp.Header.Get("Acp-Connection-Id"))
	}},
	// TR-2: initialize opens a connection.
	{"TR2_InitializeAnswersInTheBody", func(t *testing.T, r *raw) {
		resp := r.post(InitializeBody, "Content-Type", "application/json")
		body := r.expect(resp, 200)
		id := resp.Header.Get("Acp-Connection-Id")
		assert.Regexp(t, uuidV4, id)
		assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"))
		var msg map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(body, &msg), "body %s", body)
		assert.JSONEq(t, `1`, string(msg["id"]))
		assert.Contains(t, msg, "result")
		assert.NotContains(t, msg, "connectionId")
		r.delete(id)
	}},
	{"TR2_AgentErrorIs200WithAnID", func(t *testing.T, r *raw) {
		resp := r.post(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, "Content-Type", "application/json")
		body := r.expect(resp, 200)
		id := resp.Header.Get("Acp-Connection-Id")
		assert.Regexp(t, uuidV4, id)
		var msg map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(body, &msg), "body %s", body)
		assert.JSONEq(t, `7`, string(msg["id"]))
		assert.Contains(t, msg, "error")
		r.delete(id)
	}},
	{"TR2_InitializeWithNullIDIs400", func(t *testing.T, r *raw) {
		r.expect(r.post(`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`, "Content-Type", "application/json"), 400)
	}},
	{"TR2_InitializeOnAConnectionIs400", func(t *testing.T, r *raw) {
		id := r.initialize()
		r.expect(r.post(InitializeBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 400)
		r.expect(r.post(InitializeBody, "Content-Type", "application/json", "Acp-Connection-Id", "no-such-connection"), 400)
		r.delete(id)
	}},
	{"TR2_AgentFailingIs500", func(t *testing.T, r *raw) {
		resp := r.do(http.MethodPost, r.s.BrokenEndpoint, strings.NewReader(InitializeBody), "Content-Type", "application/json")
		body := r.expect(resp, 500)
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &msg), "body %s", body)
		assert.JSONEq(t, `1`, string(msg.ID))
		assert.Equal(t, -32603, msg.Error.Code)
		assert.Equal(t, "Initialize failed", msg.Error.Message)
	}},
	// TR-3: every other POST names its connection and is answered 202.
	{"TR3_MissingConnectionIs400", func(t *testing.T, r *raw) {
		r.expect(r.post(newSessionBody, "Content-Type", "application/json"), 400)
	}},
	{"TR3_UnknownConnectionIs404", func(t *testing.T, r *raw) {
		r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", "00000000-0000-4000-8000-000000000000"), 404)
	}},
	{"TR3_AcceptedWithoutBody", func(t *testing.T, r *raw) {
		id := r.initialize()
		body := r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 202)
		assert.Empty(t, body)
		r.delete(id)
	}},
	// TR-4: Acp-Session-Id on session messages.
	{"TR4_MissingSessionHeaderIs400", func(t *testing.T, r *raw) {
		id := r.initialize()
		prompt := `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`
		r.expect(r.post(prompt, "Content-Type", "application/json", "Acp-Connection-Id", id), 400)
		cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`
		r.expect(r.post(cancel, "Content-Type", "application/json", "Acp-Connection-Id", id), 400)
		r.delete(id)
	}},
	{"TR4_MismatchedSessionHeaderIs400", func(t *testing.T, r *raw) {
		id := r.initialize()
		prompt := `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`
		r.expect(r.post(prompt, "Content-Type", "application/json", "Acp-Connection-Id", id, "Acp-Session-Id", "s2"), 400)
		r.delete(id)
	}},
	// TR-5: event streams.
	{"TR5_AcceptWithoutEventStreamIs406", func(t *testing.T, r *raw) {
		id := r.initialize()
		r.expect(r.get("Acp-Connection-Id", id), 406)
		r.expect(r.get("Acp-Connection-Id", id, "Accept", "*/*"), 406)
		r.expect(r.get("Acp-Connection-Id", id, "Accept", "application/json"), 406)
		r.delete(id)
	}},
	{"TR5_MissingAndUnknownConnection", func(t *testing.T, r *raw) {
		r.expect(r.get("Accept", "text/event-stream"), 400)
		r.expect(r.get("Accept", "text/event-stream", "Acp-Connection-Id", "00000000-0000-4000-8000-000000000000"), 404)
	}},
	{"TR5_StreamHeadersAtOnceAndOneReader", func(t *testing.T, r *raw) {
		id := r.initialize()
		// The 200 arrives before any event: nothing is queued yet.
		resp := r.get("Accept", "text/event-stream", "Acp-Connection-Id", id)
		require.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		r.expect(r.get("Accept", "text/event-stream", "Acp-Connection-Id", id), 409)
		session := r.get("Accept", "text/event-stream", "Acp-Connection-Id", id, "Acp-Session-Id", "never-made")
		assert.Equal(t, 200, session.StatusCode, "an unknown session's stream is accepted")
		r.expect(r.get("Accept", "text/event-stream", "Acp-Connection-Id", id, "Acp-Session-Id", "never-made"), 409)
		r.delete(id)
		resp.Body.Close()
		session.Body.Close()
	}},
	// TR-6 and TR-7: framing and routing.
	{"TR6_OneDataLinePerMessage", func(t *testing.T, r *raw) {
		id := r.initialize()
		stream := r.stream(id, "")
		r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 202)
		event := stream.nextEvent(t)
		require.Len(t, event, 1, "one field per event: %q", event)
		require.True(t, strings.HasPrefix(event[0], "data: "), "%q", event[0])
		var msg map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(event[0], "data: ")), &msg))
		assert.JSONEq(t, `2`, string(msg["id"]))
		r.delete(id)
	}},
	{"TR7_QueuedUntilAReaderComes", func(t *testing.T, r *raw) {
		id := r.initialize()
		r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 202)
		// No stream was open: the answer waited for one.
		msg := r.stream(id, "").nextMessage(t)
		assert.JSONEq(t, `2`, string(msg["id"]))
		r.delete(id)
	}},
	{"TR7_PromptOnTheSessionStream", func(t *testing.T, r *raw) {
		id := r.initialize()
		conn := r.stream(id, "")
		r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 202)
		var result struct {
			SessionID string `json:"sessionId"`
		}
		require.NoError(t, json.Unmarshal(conn.nextMessage(t)["result"], &result))
		require.NotEmpty(t, result.SessionID)
		sid := result.SessionID
		session := r.stream(id, sid)
		prompt := `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":` + quote(sid) + `,"prompt":[{"type":"text","text":"hello"}]}}`
		r.expect(r.post(prompt, "Content-Type", "application/json", "Acp-Connection-Id", id, "Acp-Session-Id", sid), 202)
		updates := 0
		for {
			msg := session.nextMessage(t)
			if string(msg["method"]) == `"session/update"` {
				updates++
				continue
			}
			assert.JSONEq(t, `3`, string(msg["id"]), "the answer follows the updates on the session's stream")
			break
		}
		assert.Positive(t, updates)
		r.delete(id)
	}},
	// TR-8: DELETE ends a connection; other methods are 405.
	{"TR8_Delete", func(t *testing.T, r *raw) {
		r.expect(r.do(http.MethodDelete, r.s.Endpoint, nil), 400)
		r.expect(r.do(http.MethodDelete, r.s.Endpoint, nil, "Acp-Connection-Id", "00000000-0000-4000-8000-000000000000"), 404)
		id := r.initialize()
		stream := r.stream(id, "")
		r.expect(r.do(http.MethodDelete, r.s.Endpoint, nil, "Acp-Connection-Id", id), 202)
		stream.requireEnd(t, r.ctx)
		r.expect(r.do(http.MethodDelete, r.s.Endpoint, nil, "Acp-Connection-Id", id), 404)
		r.expect(r.post(newSessionBody, "Content-Type", "application/json", "Acp-Connection-Id", id), 404)
	}},
	{"TR8_OtherMethodsAre405", func(t *testing.T, r *raw) {
		r.expect(r.do(http.MethodPut, r.s.Endpoint, strings.NewReader("{}"), "Content-Type", "application/json"), 405)
		r.expect(r.do(http.MethodPatch, r.s.Endpoint, nil), 405)
	}},
	// TR-9: no batches, only JSON objects.
	{"TR9_BatchIs400WithAnError", func(t *testing.T, r *raw) {
		body := r.expect(r.post(`[`+InitializeBody+`]`, "Content-Type", "application/json"), 400)
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &msg), "body %s", body)
		assert.Equal(t, "2.0", msg.JSONRPC)
		assert.JSONEq(t, `null`, string(msg.ID))
		assert.Equal(t, -32600, msg.Error.Code)
	}},
	{"TR9_NotJSONOrNotAnObjectIs400", func(t *testing.T, r *raw) {
		r.expect(r.post(`{"jsonrpc":`, "Content-Type", "application/json"), 400)
		r.expect(r.post(`5`, "Content-Type", "application/json"), 400)
		r.expect(r.post(`"initialize"`, "Content-Type", "application/json"), 400)
		r.expect(r.post(``, "Content-Type", "application/json"), 400)
	}},
}

// raw sends requests with net/http alone.
type raw struct {
	t   *testing.T
	ctx context.Context
	s   Server
}

// do sends one request with header pairs; the response is closed at the
// end of the test.
func (r *raw) do(method, url string, body io.Reader, header ...string) *http.Response {
	r.t.Helper()
	req, err := http.NewRequestWithContext(r.ctx, method, url, body)
	require.NoError(r.t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err, "%s %s", method, url)
	r.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (r *raw) post(body string, header ...string) *http.Response {
	r.t.Helper()
	return r.do(http.MethodPost, r.s.Endpoint, strings.NewReader(body), header...)
}

func (r *raw) get(header ...string) *http.Response {
	r.t.Helper()
	return r.do(http.MethodGet, r.s.Endpoint, nil, header...)
}

// expect asserts the status and returns the body.
func (r *raw) expect(resp *http.Response, status int) []byte {
	r.t.Helper()
	body, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	require.Equal(r.t, status, resp.StatusCode, "%s %s answered %s: %s", resp.Request.Method, resp.Request.URL, resp.Status, body)
	return body
}

// initialize opens a connection and returns its id.
func (r *raw) initialize() string {
	r.t.Helper()
	resp := r.post(InitializeBody, "Content-Type", "application/json")
	r.expect(resp, 200)
	id := resp.Header.Get("Acp-Connection-Id")
	require.NotEmpty(r.t, id)
	return id
}

func (r *raw) delete(id string) {
	r.t.Helper()
	r.expect(r.do(http.MethodDelete, r.s.Endpoint, nil, "Acp-Connection-Id", id), 202)
}

// stream opens the connection's (sid "") or a session's event stream.
func (r *raw) stream(id, sid string) *events {
	r.t.Helper()
	header := []string{"Accept", "text/event-stream", "Acp-Connection-Id", id}
	if sid != "" {
		header = append(header, "Acp-Session-Id", sid)
	}
	resp := r.get(header...)
	require.Equal(r.t, 200, resp.StatusCode)
	return &events{sc: bufio.NewScanner(resp.Body)}
}

// events reads an event stream line by line.
type events struct {
	sc *bufio.Scanner
}

// nextEvent returns the fields of the next event, comments skipped.
func (e *events) nextEvent(t *testing.T) []string {
	t.Helper()
	var fields []string
	for e.sc.Scan() {
		line := e.sc.Text()
		switch {
		case line == "" && len(fields) > 0:
			return fields
		case line == "", strings.HasPrefix(line, ":"):
		default:
			fields = append(fields, line)
		}
	}
	require.NoError(t, e.sc.Err())
	require.FailNow(t, "the event stream ended")
	return nil
}

// nextMessage returns the next event's message.
func (e *events) nextMessage(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var data bytes.Buffer
	for _, f := range e.nextEvent(t) {
		if v, ok := strings.CutPrefix(f, "data:"); ok {
			data.WriteString(strings.TrimPrefix(v, " "))
		}
	}
	var msg map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data.Bytes(), &msg), "event data %q", data.String())
	return msg
}

// requireEnd reads the stream to its end, which must come before ctx's.
func (e *events) requireEnd(t *testing.T, ctx context.Context) {
	t.Helper()
	for e.sc.Scan() {
	}
	require.NoError(t, ctx.Err(), "the event stream did not end")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
