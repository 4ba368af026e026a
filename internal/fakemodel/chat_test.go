package fakemodel

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatChunks reads a chat completions stream: the decoded `data:` chunks,
// and whether it ended with `data: [DONE]`.
func chatChunks(t *testing.T, r io.Reader) ([]map[string]any, bool) {
	t.Helper()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			assert.True(t, line == "", "only data lines and the blank lines between events: %q", line)
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		require.False(t, done, "nothing after [DONE]")
		if data == "[DONE]" {
			done = true
			continue
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &c))
		assert.Equal(t, "chat.completion.chunk", c["object"])
		out = append(out, c)
	}
	return out, done
}

// delta is chunk c's choices[0].delta and finish_reason.
func delta(c map[string]any) (map[string]any, any) {
	ch := c["choices"].([]any)
	if len(ch) == 0 {
		return nil, nil
	}
	first := ch[0].(map[string]any)
	return first["delta"].(map[string]any), first["finish_reason"]
}

func TestChat_StreamsTextThenToolCallThenUsageAndDone(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Text: "one two three four five", ToolCall: &ToolCall{ID: "call_1", Name: "bash", Input: `{"command":"ls"}`}}
	})
	res := post(t, context.Background(), s, "/v1/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	chunks, done := chatChunks(t, res.Body)
	assert.True(t, done, "the stream ends with data: [DONE]")
	var text strings.Builder
	var args strings.Builder
	var name, id string
	finish := any(nil)
	for _, c := range chunks {
		d, f := delta(c)
		if f != nil {
			finish = f
		}
		if s, ok := d["content"].(string); ok {
			text.WriteString(s)
		}
		if calls, ok := d["tool_calls"].([]any); ok {
			call := calls[0].(map[string]any)
			if v, ok := call["id"].(string); ok {
				id = v
			}
			fn := call["function"].(map[string]any)
			if v, ok := fn["name"].(string); ok {
				name = v
			}
			args.WriteString(fn["arguments"].(string))
		}
	}
	assert.Equal(t, "one two three four five", text.String())
	assert.Equal(t, "call_1", id)
	assert.Equal(t, "bash", name)
	assert.Equal(t, `{"command":"ls"}`, args.String(), "the arguments arrive across deltas")
	assert.Equal(t, "tool_calls", finish)
	last := chunks[len(chunks)-1]
	assert.Empty(t, last["choices"], "include_usage: a last chunk with no choices")
	assert.Contains(t, last, "usage")
	rec := s.ModelRequests()
	require.Len(t, rec, 1)
	assert.Equal(t, "chat", rec[0].API)
}

func TestChat_TextEndsWithStop(t *testing.T) {
	s := Start(t, Text("hello"))
	res := post(t, context.Background(), s, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
	chunks, done := chatChunks(t, res.Body)
	assert.True(t, done)
	_, finish := delta(chunks[len(chunks)-1])
	assert.Equal(t, "stop", finish, "without include_usage the finish chunk is the last")
}

func TestChat_Unstreamed(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Text: "a title", ToolCall: &ToolCall{ID: "c", Name: "n", Input: `{}`}}
	})
	res := post(t, context.Background(), s, "/v1/chat/completions", `{"model":"m","messages":[]}`)
	var c struct {
		Object  string
		Choices []struct {
			Message struct {
				Content   string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
	assert.Equal(t, "chat.completion", c.Object)
	require.Len(t, c.Choices, 1)
	assert.Equal(t, "a title", c.Choices[0].Message.Content)
	assert.Equal(t, "tool_calls", c.Choices[0].FinishReason)
	require.Len(t, c.Choices[0].Message.ToolCalls, 1)
	assert.Equal(t, "{}", c.Choices[0].Message.ToolCalls[0].Function.Arguments)
}

// A scripted status is answered in each API's own error shape.
func TestScriptedStatusInEachAPIsShape(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Status: http.StatusUnauthorized, Error: "Incorrect API key provided"}
	})
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"m","stream":true}`, `{"error":{"code":"invalid_api_key","message":"Incorrect API key provided","param":null,"type":"invalid_request_error"}}`},
		{"/v1/responses", `{"model":"m","stream":true}`, `{"error":{"code":"invalid_api_key","message":"Incorrect API key provided","param":null,"type":"invalid_request_error"}}`},
		{"/v1/messages", `{"model":"m","stream":true}`, `{"error":{"message":"Incorrect API key provided","type":"authentication_error"},"type":"error"}`},
		{"/v1beta/models/g:streamGenerateContent", `{"contents":[]}`, `{"error":{"code":401,"message":"Incorrect API key provided","status":"UNAUTHENTICATED"}}`},
	} {
		res := post(t, context.Background(), s, tc.path, tc.body)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, tc.path)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(b), tc.path)
	}
}

func TestTunnelsAreRefusedAndRecorded(t *testing.T) {
	s := Start(t, nil)
	res, err := http.Get(s.URL + "/nowhere")
	require.NoError(t, err)
	res.Body.Close()
	req, err := http.NewRequest(http.MethodConnect, s.URL, nil)
	require.NoError(t, err)
	req.Host = "registry.npmjs.org:443"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	tunnels := s.Tunnels()
	require.Len(t, tunnels, 1, "the unknown path is not a tunnel")
	assert.Equal(t, "registry.npmjs.org:443", tunnels[0].Path)
	assert.Equal(t, http.StatusForbidden, tunnels[0].Status)
}
