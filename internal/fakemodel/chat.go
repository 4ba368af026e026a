package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
)

// The OpenAI Chat Completions API: POST /v1/chat/completions, streamed as
// server-sent `data:` chunks (chat.completion.chunk objects whose
// choices[0].delta carries content or tool_calls) ended by `data: [DONE]`
// when the body asks for "stream": true, else one chat.completion object.
// Copilot CLI, OpenCode, Qwen Code and Cline all speak it to an
// OpenAI-compatible provider.
func init() {
	registerAPI(api{
		name: "chat",
		match: func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions")
		},
		serve:     serveChat,
		errorBody: openaiError,
	})
}

// ChatModel is the model runtimes set up against the chat API are told
// to use (any name is answered).
const ChatModel = "fake-model"

// chatRequest is what the fake reads of a chat completions request.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func serveChat(s *Server, w http.ResponseWriter, r *http.Request, rec Request) {
	var req chatRequest
	rep, ok := s.scripted(w, rec, openaiError, &req)
	if !ok {
		return
	}
	id := fmt.Sprintf("chatcmpl-fake-%d", len(s.Requests()))
	created := time.Now().Unix()
	finish := "stop"
	if rep.ToolCall != nil {
		finish = "tool_calls"
	}
	// OpenAI's terms, as in the Responses API: prompt_tokens include the
	// cached ones, completion_tokens the reasoning ones.
	u := rep.usage()
	usage := map[string]any{
		"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rep.Text}
		if tc := rep.ToolCall; tc != nil {
			msg["tool_calls"] = []any{chatToolCall(tc, tc.Input)}
		}
		answerJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	startSSE(w)
	chunk := func(delta map[string]any, finish any) error {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		return sse(w, "", b)
	}
	text := func(t string) error { return chunk(map[string]any{"content": t}, nil) }
	err := chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, c := range chunks(rep.Text) {
		if err == nil {
			err = text(c)
		}
	}
	if err == nil && rep.Slow {
		err = s.slowChunks(r.Context(), text)
	}
	if tc := rep.ToolCall; tc != nil && err == nil {
		// The call's head, then its arguments as a second delta, as the
		// real API splits them.
		err = chunk(map[string]any{"tool_calls": []any{chatToolCall(tc, "")}}, nil)
		if err == nil {
			err = chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": tc.Input}}}}, nil)
		}
	}
	if err == nil {
		err = chunk(map[string]any{}, finish)
	}
	if err == nil && req.StreamOptions.IncludeUsage {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": usage,
		})
		err = sse(w, "", b)
	}
	if err == nil {
		_ = sse(w, "", []byte("[DONE]"))
	}
}

// chatToolCall is a tool call as the chat API writes it, with arguments
// args (the whole input, or "" in a stream's first delta).
func chatToolCall(tc *ToolCall, args string) map[string]any {
	return map[string]any{"index": 0, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": args}}
}
