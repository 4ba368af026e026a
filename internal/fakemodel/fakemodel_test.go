package fakemodel

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// event is one server-sent event, decoded.
type event struct {
	name string
	data map[string]any
}

// post sends body to path and returns the response; the caller closes it.
func post(t *testing.T, ctx context.Context, s *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// readEvents reads a whole event stream.
func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d))
			assert.Equal(t, name, d["type"], "the event name and the data's type agree")
			out = append(out, event{name, d})
		}
	}
	return out
}

func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

func TestListensOnLoopbackOnly(t *testing.T) {
	s := Start(t, nil)
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname())
}

func TestAnthropic_StreamsTextThenToolCall(t *testing.T) {
	s := Start(t, func(r Request) Reply {
		return Reply{Text: "one two three four five", ToolCall: &ToolCall{ID: "toolu_1", Name: "Write", Input: `{"file_path":"/x"}`}}
	})
	res := post(t, context.Background(), s, "/v1/messages", `{"model":"m","stream":true,"messages":[]}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	evs := readEvents(t, res.Body)
	assert.Equal(t, []string{
		"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop",
	}, names(evs))
	var text strings.Builder
	for _, e := range evs[2:5] {
		text.WriteString(e.data["delta"].(map[string]any)["text"].(string))
	}
	assert.Equal(t, "one two three four five", text.String())
	assert.Equal(t, "tool_use", evs[6].data["content_block"].(map[string]any)["type"])
	assert.Equal(t, `{"file_path":"/x"}`, evs[7].data["delta"].(map[string]any)["partial_json"])
	assert.Equal(t, "tool_use", evs[9].data["delta"].(map[string]any)["stop_reason"])

	rec := s.ModelRequests()
	require.Len(t, rec, 1)
	assert.Equal(t, "anthropic", rec[0].API)
	assert.Equal(t, "/v1/messages", rec[0].Path)
	assert.True(t, rec[0].Contains(`"stream":true`))
}

func TestAnthropic_UnstreamedMessage(t *testing.T) {
	s := Start(t, Text("a title"))
	res := post(t, context.Background(), s, "/v1/messages", `{"model":"m","messages":[]}`)
	var msg struct {
		Content []struct {
			Type, Text string
		}
		StopReason string `json:"stop_reason"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&msg))
	assert.Equal(t, "end_turn", msg.StopReason)
	require.Len(t, msg.Content, 1)
	assert.Equal(t, "a title", msg.Content[0].Text)
}

func TestModelRequestContains_AllInOneRequest(t *testing.T) {
	s := Start(t, Text("ok"))
	post(t, context.Background(), s, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"first lighthouse"}]}`)
	post(t, context.Background(), s, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"second"}]}`)
	assert.True(t, s.ModelRequestContains("first", "lighthouse"))
	assert.True(t, s.ModelRequestContains("second"))
	assert.False(t, s.ModelRequestContains("lighthouse", "second"), "the two strings are in different requests")
}

func TestOpenAI_WebSocketUpgradeRefusedWith426(t *testing.T) {
	s := Start(t, nil)
	req, err := http.NewRequest(http.MethodGet, s.URL+"/v1/responses", nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUpgradeRequired, res.StatusCode)
}

func TestOpenAI_StreamsTextThenFunctionCall(t *testing.T) {
	s := Start(t, func(r Request) Reply {
		return Reply{Text: "hello there", ToolCall: &ToolCall{ID: "call_1", Name: "exec_command", Input: `{"cmd":"ls"}`}}
	})
	res := post(t, context.Background(), s, "/v1/responses", `{"model":"m","stream":true,"input":[]}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	evs := readEvents(t, res.Body)
	assert.Equal(t, []string{
		"response.created",
		"response.output_item.added", "response.output_text.delta", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed",
	}, names(evs))
	assert.Equal(t, "hello there", evs[2].data["delta"])
	call := evs[5].data["item"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "function_call", "id": "fc_call_1", "call_id": "call_1", "name": "exec_command", "arguments": `{"cmd":"ls"}`, "status": "completed"}, call)
	done := evs[6].data["response"].(map[string]any)
	assert.Equal(t, "completed", done["status"])
	assert.Contains(t, done, "usage")
	assert.Len(t, done["output"], 2)
}

func TestSlowStreamEndsWhenTheClientGoesAway(t *testing.T) {
	s := Start(t, func(Request) Reply { return Reply{Slow: true} }, Options{ChunkEvery: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := post(t, ctx, s, "/v1/responses", `{"model":"m","stream":true}`)
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "tick 3.") {
			break
		}
	}
	cancel()
	// Close waits for every handler: a stream that ignored the client's
	// departure would hold it until SlowFor.
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow stream outlived its client")
	}
}

func TestSlowStreamBoundedBySlowFor(t *testing.T) {
	s := Start(t, func(Request) Reply { return Reply{Slow: true} }, Options{SlowFor: 20 * time.Millisecond, ChunkEvery: time.Millisecond})
	res := post(t, context.Background(), s, "/v1/messages", `{"model":"m","stream":true}`)
	evs := readEvents(t, res.Body)
	assert.Equal(t, "message_stop", evs[len(evs)-1].name, "the stream finished on its own")
}

func TestProxyForwardsNothing(t *testing.T) {
	s := Start(t, nil)
	proxy, err := url.Parse(s.URL)
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	_, err = client.Get("https://example.invalid/")
	assert.Error(t, err, "a CONNECT tunnel is refused")
	res, err := client.Get("http://example.invalid/path")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode)

	rec := s.Requests()
	require.Len(t, rec, 2)
	assert.Equal(t, Request{API: "proxy", Method: http.MethodConnect, Path: "example.invalid:443"}, Request{API: rec[0].API, Method: rec[0].Method, Path: rec[0].Path})
	assert.Equal(t, "proxy", rec[1].API)
	assert.Empty(t, s.ModelRequests())
}

func TestRequestBound(t *testing.T) {
	s := Start(t, Text("ok"), Options{MaxRequests: 1})
	res := post(t, context.Background(), s, "/v1/messages", `{"model":"m"}`)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	res = post(t, context.Background(), s, "/v1/messages", `{"model":"m"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Equal(t, 1, s.Overflow())
	assert.Len(t, s.ModelRequests(), 2, "both recorded")
}

func TestLifetimeBound(t *testing.T) {
	s := Start(t, nil, Options{Lifetime: 10 * time.Millisecond})
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server outlived its lifetime")
	}
	s.Close() // a second Close is harmless
	_, err := http.Get(s.URL + "/v1/messages")
	assert.Error(t, err, "nothing listens any more")
}

func TestUnknownPathIs404AndRecorded(t *testing.T) {
	s := Start(t, nil)
	res, err := http.Get(s.URL + "/v1/models")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Len(t, s.Requests(), 1)
	assert.Equal(t, "", s.Requests()[0].API)
}

func TestChunks(t *testing.T) {
	assert.Equal(t, []string{"one two ", "three four ", "five"}, chunks("one two three four five"))
	assert.Empty(t, chunks(""))
}

func TestScriptedUsage_EachAPIReportsItInItsOwnTerms(t *testing.T) {
	u := &Usage{Input: 100, Output: 20, CacheRead: 40, CacheWrite: 8, Reasoning: 6}
	s := Start(t, func(r Request) Reply {
		if r.Contains(`"default"`) {
			return Reply{Text: "plain"}
		}
		return Reply{Text: "figures", Usage: u}
	})

	evs := readEvents(t, post(t, context.Background(), s, "/v1/messages", `{"model":"m","stream":true}`).Body)
	start := evs[0].data["message"].(map[string]any)["usage"].(map[string]any)
	assert.Equal(t, map[string]any{"input_tokens": 100.0, "output_tokens": 1.0, "cache_read_input_tokens": 40.0, "cache_creation_input_tokens": 8.0}, start)
	last := evs[len(evs)-2]
	require.Equal(t, "message_delta", last.name)
	assert.Equal(t, map[string]any{"output_tokens": 20.0}, last.data["usage"], "the final output count")

	var msg struct{ Usage map[string]int64 }
	require.NoError(t, json.NewDecoder(post(t, context.Background(), s, "/v1/messages", `{"model":"m"}`).Body).Decode(&msg))
	assert.Equal(t, map[string]int64{"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 8}, msg.Usage)

	evs = readEvents(t, post(t, context.Background(), s, "/v1/responses", `{"model":"m","stream":true}`).Body)
	done := evs[len(evs)-1].data["response"].(map[string]any)
	assert.Equal(t, map[string]any{
		"input_tokens": 100.0, "input_tokens_details": map[string]any{"cached_tokens": 40.0},
		"output_tokens": 20.0, "output_tokens_details": map[string]any{"reasoning_tokens": 6.0},
		"total_tokens": 120.0,
	}, done["usage"])

	evs = readEvents(t, post(t, context.Background(), s, "/v1/responses", `{"model":"default","stream":true}`).Body)
	done = evs[len(evs)-1].data["response"].(map[string]any)
	assert.Equal(t, 10.0, done["usage"].(map[string]any)["input_tokens"], "DefaultUsage without a scripted one")
	assert.Equal(t, 5.0, done["usage"].(map[string]any)["output_tokens"])
}
