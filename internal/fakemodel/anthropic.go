package fakemodel

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/segmentio/encoding/json"
)

// The Anthropic Messages API: POST /v1/messages, streamed as server-sent
// events when the body asks for "stream": true (claude-agent-acp always
// does), else one JSON message. POST /v1/messages/count_tokens answers a
// fixed count.
func init() {
	registerAPI(api{
		name: "anthropic",
		match: func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages")
		},
		serve: serveAnthropic,
	})
}

func serveAnthropic(s *Server, w http.ResponseWriter, r *http.Request, rec Request) {
	if r.URL.Path == "/v1/messages/count_tokens" {
		answerJSON(w, map[string]any{"input_tokens": 10})
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"body is not JSON"}}`, http.StatusBadRequest)
		return
	}
	rep := s.reply(rec)
	id := fmt.Sprintf("msg_fake_%d", len(s.Requests()))
	stop := "end_turn"
	if rep.ToolCall != nil {
		stop = "tool_use"
	}
	u := rep.usage()
	usage := map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead}
	if !req.Stream {
		var content []any
		if rep.Text != "" || rep.ToolCall == nil {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		if tc := rep.ToolCall; tc != nil {
			content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Input)})
		}
		answerJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	startSSE(w)
	ev := func(name string, data map[string]any) error {
		data["type"] = name
		b, _ := json.Marshal(data)
		return sse(w, name, b)
	}
	err := ev("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{
			"input_tokens": u.Input, "output_tokens": 1, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead,
		},
	}})
	index := 0
	text := func(t string) error {
		return ev("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": t}})
	}
	if err == nil && (rep.Text != "" || rep.Slow) {
		err = ev("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range chunks(rep.Text) {
			if err == nil {
				err = text(c)
			}
		}
		if err == nil && rep.Slow {
			err = s.slowChunks(r.Context(), text)
		}
		if err == nil {
			err = ev("content_block_stop", map[string]any{"index": index})
		}
		index++
	}
	if tc := rep.ToolCall; tc != nil && err == nil {
		err = ev("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{},
		}})
		if err == nil {
			err = ev("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": tc.Input}})
		}
		if err == nil {
			err = ev("content_block_stop", map[string]any{"index": index})
		}
	}
	if err == nil {
		err = ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
	}
	if err == nil {
		_ = ev("message_stop", map[string]any{})
	}
}
