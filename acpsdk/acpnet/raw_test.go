package acpnet_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/acpnet"
)

// rawHTTP is a client of the endpoint made of plain requests, for tests
// that must send what no well-behaved client sends, or not read.
type rawHTTP struct {
	t      *testing.T
	url    string
	id     string
	client *http.Client
}

// rawConnect runs initialize with a plain POST.
func rawConnect(t *testing.T, url string) *rawHTTP {
	t.Helper()
	r := &rawHTTP{t: t, url: url, client: http.DefaultClient}
	resp := r.do(http.MethodPost, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`), "Content-Type", "application/json")
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, 200, resp.StatusCode)
	r.id = resp.Header.Get(acpnet.HeaderConnectionID)
	require.NotEmpty(t, r.id)
	return r
}

func (r *rawHTTP) do(method string, body io.Reader, header ...string) *http.Response {
	r.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(r.t), method, r.url, body)
	require.NoError(r.t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if r.id != "" {
		req.Header.Set(acpnet.HeaderConnectionID, r.id)
	}
	resp, err := r.client.Do(req)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// post sends one message and returns the status.
func (r *rawHTTP) post(body string, header ...string) int {
	r.t.Helper()
	resp := r.do(http.MethodPost, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, header...)...)
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// stream opens an event stream ("" the connection's).
func (r *rawHTTP) stream(sid string) *rawEvents {
	r.t.Helper()
	h := []string{"Accept", "text/event-stream"}
	if sid != "" {
		h = append(h, acpnet.HeaderSessionID, sid)
	}
	resp := r.do(http.MethodGet, nil, h...)
	require.Equal(r.t, 200, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	return &rawEvents{t: r.t, body: resp.Body, sc: sc}
}

// newSession runs session/new and returns the session id, read from the
// connection's stream.
func (r *rawHTTP) newSession(conn *rawEvents) string {
	r.t.Helper()
	require.Equal(r.t, 202, r.post(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`))
	var res struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(r.t, json.Unmarshal(conn.next()["result"], &res))
	return res.SessionID
}

type rawEvents struct {
	t    *testing.T
	body io.ReadCloser
	sc   *bufio.Scanner
}

// next returns the next message.
func (e *rawEvents) next() map[string]json.RawMessage {
	e.t.Helper()
	for e.sc.Scan() {
		if data, ok := strings.CutPrefix(e.sc.Text(), "data: "); ok {
			var msg map[string]json.RawMessage
			require.NoError(e.t, json.Unmarshal([]byte(data), &msg))
			return msg
		}
	}
	require.FailNow(e.t, "the stream ended", "%v", e.sc.Err())
	return nil
}

// drain reads the stream to its end.
func (e *rawEvents) drain() {
	_, _ = io.Copy(io.Discard, e.body)
}

func prompt(id int, sid, text string) string {
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"session/prompt","params":{"sessionId":` + quoteJSON(sid) + `,"prompt":[{"type":"text","text":` + quoteJSON(text) + `}]}}`
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
