package fakemodel

import (
	"fmt"
	"net/http"

	"github.com/segmentio/encoding/json"
)

// The Gemini API on the scripted Server, for the suite that runs every real
// runtime the same way (internal/realruntime): POST
// /v1beta/models/<model>:streamGenerateContent (server-sent `data:`
// chunks), :generateContent (one JSON answer) and :countTokens. A call
// asking for a JSON answer (generationConfig.responseMimeType
// application/json) is one of the CLI's own classifiers, not the agent's
// conversation: it is answered with GeminiRouterAnswer without consulting
// the script, and still recorded and counted. GeminiAPI, beside this, is
// the fake the token-measurement tests script with usage figures.
func init() {
	registerAPI(api{
		name: "gemini",
		match: func(r *http.Request) bool {
			_, _, ok := geminiPath(r.URL.Path)
			return ok && r.Method == http.MethodPost
		},
		serve:     serveGemini,
		errorBody: geminiError,
	})
}

// geminiError is the Gemini API's error body.
func geminiError(status int, message string) any {
	name := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
	if name == "" {
		name = "INTERNAL"
	}
	return map[string]any{"error": map[string]any{"code": status, "message": message, "status": name}}
}

func serveGemini(s *Server, w http.ResponseWriter, r *http.Request, rec Request) {
	model, method, _ := geminiPath(r.URL.Path)
	usage := &geminiUsageWire{GeminiUsage: GeminiUsage{Prompt: 10, Output: 5}, Total: 15}
	if method == "countTokens" {
		answerJSON(w, map[string]int64{"totalTokens": usage.Prompt})
		return
	}
	rep := Reply{Text: GeminiRouterAnswer}
	if !(GeminiRequest{Body: rec.Body}).WantsJSON() {
		var ok bool
		if rep, ok = s.scripted(w, rec, geminiError, &struct{}{}); !ok {
			return
		}
	}
	var call *GeminiFunctionCall
	if tc := rep.ToolCall; tc != nil {
		call = &GeminiFunctionCall{Name: tc.Name}
		if err := json.Unmarshal([]byte(tc.Input), &call.Args); err != nil {
			answerError(w, http.StatusInternalServerError, geminiError(http.StatusInternalServerError, fmt.Sprintf("fakemodel: the script's tool input is not a JSON object: %v", err)))
			return
		}
	}
	chunk := func(parts []geminiPart, last bool) geminiChunk {
		c := geminiChunk{
			Candidates:   []geminiCandidate{{Content: geminiContent{Role: "model", Parts: parts}}},
			ModelVersion: model,
			ResponseID:   fmt.Sprintf("fake-response-%d", len(s.Requests())),
		}
		if last {
			c.Candidates[0].FinishReason = "STOP"
			c.UsageMetadata = usage
		}
		return c
	}
	if method != "streamGenerateContent" {
		var parts []geminiPart
		if rep.Text != "" || call == nil {
			parts = append(parts, geminiPart{Text: rep.Text})
		}
		if call != nil {
			parts = append(parts, geminiPart{FunctionCall: call})
		}
		answerJSON(w, chunk(parts, true))
		return
	}
	startSSE(w)
	send := func(c geminiChunk) error {
		b, _ := json.Marshal(c)
		return sse(w, "", b)
	}
	// Each piece of text is held until the next one comes, so the last
	// chunk carries text (or the function call) with the finish reason
	// and the usage, as the real API's last chunk does.
	var pending *geminiPart
	text := func(t string) error {
		var err error
		if pending != nil {
			err = send(chunk([]geminiPart{*pending}, false))
		}
		pending = &geminiPart{Text: t}
		return err
	}
	var err error
	for _, c := range chunks(rep.Text) {
		if err == nil {
			err = text(c)
		}
	}
	if err == nil && rep.Slow {
		err = s.slowChunks(r.Context(), text)
	}
	if err != nil {
		return
	}
	var last []geminiPart
	if pending != nil {
		last = append(last, *pending)
	}
	if call != nil {
		last = append(last, geminiPart{FunctionCall: call})
	}
	if len(last) == 0 {
		last = []geminiPart{{}}
	}
	_ = send(chunk(last, true))
}
