package fakemodel

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/segmentio/encoding/json"
)

// The OpenAI Responses API: POST /v1/responses streamed as server-sent
// events. codex first tries a WebSocket upgrade on GET /v1/responses; the
// 426 it gets makes it fall back to the POST at once. Other /v1 paths
// (models and the like) are answered 404 by the router.
func init() {
	registerAPI(api{
		name: "openai",
		match: func(r *http.Request) bool {
			return strings.HasSuffix(r.URL.Path, "/v1/responses")
		},
		serve: serveOpenAI,
	})
}

func serveOpenAI(s *Server, w http.ResponseWriter, r *http.Request, rec Request) {
	if r.Method != http.MethodPost {
		// The WebSocket upgrade (or any other method): not here.
		http.Error(w, "fakemodel: use POST with stream: true", http.StatusUpgradeRequired)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"body is not JSON"}}`, http.StatusBadRequest)
		return
	}
	rep := s.reply(rec)
	n := len(s.Requests())
	respID, msgID := fmt.Sprintf("resp_fake_%d", n), fmt.Sprintf("msg_fake_%d", n)
	startSSE(w)
	seq := 0
	ev := func(name string, data map[string]any) error {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		return sse(w, name, b)
	}
	response := func(status string, output []any) map[string]any {
		m := map[string]any{"id": respID, "object": "response", "status": status, "model": req.Model, "output": output}
		if status == "completed" {
			u := rep.usage()
			m["usage"] = map[string]any{
				"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
				"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
				"total_tokens": u.Input + u.Output,
			}
		}
		return m
	}
	err := ev("response.created", map[string]any{"response": response("in_progress", []any{})})
	var output []any
	index := 0
	if rep.Text != "" || rep.Slow || rep.ToolCall == nil {
		var all strings.Builder
		item := func(status string, content []any) map[string]any {
			return map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": status, "content": content}
		}
		text := func(t string) error {
			all.WriteString(t)
			return ev("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": index, "content_index": 0, "delta": t})
		}
		if err == nil {
			err = ev("response.output_item.added", map[string]any{"output_index": index, "item": item("in_progress", []any{})})
		}
		for _, c := range chunks(rep.Text) {
			if err == nil {
				err = text(c)
			}
		}
		if err == nil && rep.Slow {
			err = s.slowChunks(r.Context(), text)
		}
		done := item("completed", []any{map[string]any{"type": "output_text", "text": all.String(), "annotations": []any{}}})
		if err == nil {
			err = ev("response.output_item.done", map[string]any{"output_index": index, "item": done})
		}
		output = append(output, done)
		index++
	}
	if tc := rep.ToolCall; tc != nil && err == nil {
		item := map[string]any{"type": "function_call", "id": "fc_" + tc.ID, "call_id": tc.ID, "name": tc.Name, "arguments": tc.Input, "status": "completed"}
		err = ev("response.output_item.added", map[string]any{"output_index": index, "item": item})
		if err == nil {
			err = ev("response.output_item.done", map[string]any{"output_index": index, "item": item})
		}
		output = append(output, item)
	}
	if err == nil {
		_ = ev("response.completed", map[string]any{"response": response("completed", output)})
	}
}
