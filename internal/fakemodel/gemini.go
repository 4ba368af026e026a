package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"
)

// GeminiAPI is a fake of the Gemini API's generateContent family, served on
// 127.0.0.1 for tests that run the real Gemini CLI offline: point the CLI at
// it with GOOGLE_GEMINI_BASE_URL=URL() and any GEMINI_API_KEY. Each model
// call is answered by the test's script; streamGenerateContent is answered
// as server-sent events whose last chunk carries usageMetadata, as the real
// API does.
type GeminiAPI struct {
	script GeminiScript
	ln     net.Listener
	srv    *http.Server
	done   chan struct{}

	mu       sync.Mutex
	requests []GeminiRequest
}

// GeminiRequest is one model call as the fake received it.
type GeminiRequest struct {
	// Model and Method come from the path
	// /v1beta/models/<Model>:<Method>.
	Model  string
	Method string
	// Body is the raw JSON request body.
	Body json.RawMessage
	// Seq numbers the calls from 1 in arrival order.
	Seq int
}

// HasTools reports whether the request declared function tools, which is
// how the CLI's main conversation differs from its utility calls (routing,
// next-speaker checks, titles).
func (r GeminiRequest) HasTools() bool {
	var b struct {
		Tools []json.RawMessage `json:"tools"`
	}
	return json.Unmarshal(r.Body, &b) == nil && len(b.Tools) > 0
}

// WantsJSON reports whether the call asked for a JSON answer
// (generationConfig.responseMimeType application/json), as the CLI's
// routing classifier and other utility calls do.
func (r GeminiRequest) WantsJSON() bool {
	var b struct {
		Config struct {
			MimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	return json.Unmarshal(r.Body, &b) == nil && b.Config.MimeType == "application/json"
}

// GeminiRouterAnswer is a JSON text both of the CLI's routing classifiers
// accept: a simple task, to be served by the default model.
const GeminiRouterAnswer = `{"reasoning":"a simple request","model_choice":"flash","complexity_reasoning":"a simple request","complexity_score":10}`

// LastUserText is the text of the request's last user turn, or "".
func (r GeminiRequest) LastUserText() string {
	var b struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(r.Body, &b) != nil {
		return ""
	}
	for i := len(b.Contents) - 1; i >= 0; i-- {
		c := b.Contents[i]
		if c.Role != "user" {
			continue
		}
		var sb strings.Builder
		for _, p := range c.Parts {
			sb.WriteString(p.Text)
		}
		return sb.String()
	}
	return ""
}

// GeminiReply is the script's answer to one call.
type GeminiReply struct {
	// Text is the answer's text; it is streamed in up to two chunks.
	Text string
	// Call, when set, makes the answer a function call instead of text.
	Call *GeminiFunctionCall
	// Usage is the call's usageMetadata.
	Usage GeminiUsage
	// ModelVersion is reported as modelVersion; empty uses the path's model.
	ModelVersion string
	// Status, when non-zero, answers with that HTTP status and an error body.
	Status int
}

// GeminiFunctionCall is a functionCall part.
type GeminiFunctionCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// GeminiUsage is the API's usageMetadata.
type GeminiUsage struct {
	Prompt   int64 `json:"promptTokenCount"`
	Output   int64 `json:"candidatesTokenCount"`
	Cached   int64 `json:"cachedContentTokenCount,omitempty"`
	Thoughts int64 `json:"thoughtsTokenCount,omitempty"`
}

// GeminiScript answers one call. It runs on the server's goroutines, one call
// at a time.
type GeminiScript func(GeminiRequest) GeminiReply

// maxGeminiBody bounds a request body the fake reads.
const maxGeminiBody = 32 << 20

// NewGeminiAPI listens on 127.0.0.1 and serves script until Close.
func NewGeminiAPI(script GeminiScript) (*GeminiAPI, error) {
	if script == nil {
		return nil, errors.New("fakemodel: a Gemini script is required")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	g := &GeminiAPI{script: script, ln: ln, done: make(chan struct{})}
	g.srv = &http.Server{Handler: http.HandlerFunc(g.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(g.done)
		_ = g.srv.Serve(ln)
	}()
	return g, nil
}

// URL is the base URL to give the CLI as GOOGLE_GEMINI_BASE_URL.
func (g *GeminiAPI) URL() string { return "http://" + g.ln.Addr().String() }

// Requests returns the calls received so far, in order.
func (g *GeminiAPI) Requests() []GeminiRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GeminiRequest(nil), g.requests...)
}

// Close stops the server and waits for its goroutine; open connections are
// closed.
func (g *GeminiAPI) Close() error {
	err := g.srv.Close()
	<-g.done
	return err
}

// Shutdown stops the server gracefully within ctx.
func (g *GeminiAPI) Shutdown(ctx context.Context) error {
	err := g.srv.Shutdown(ctx)
	<-g.done
	return err
}

func (g *GeminiAPI) serve(w http.ResponseWriter, r *http.Request) {
	model, method, ok := geminiPath(r.URL.Path)
	if !ok || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxGeminiBody+1))
	if err != nil || len(body) > maxGeminiBody || !json.Valid(body) {
		http.Error(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	req := GeminiRequest{Model: model, Method: method, Body: body, Seq: len(g.requests) + 1}
	g.requests = append(g.requests, req)
	reply := g.script(req)
	g.mu.Unlock()

	if reply.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":"scripted failure","status":"UNAVAILABLE"}}`, reply.Status)
		return
	}
	if reply.ModelVersion == "" {
		reply.ModelVersion = model
	}
	switch method {
	case "countTokens":
		writeJSON(w, map[string]int64{"totalTokens": reply.Usage.Prompt})
	case "streamGenerateContent":
		w.Header().Set("Content-Type", "text/event-stream")
		fl, _ := w.(http.Flusher)
		for _, c := range geminiChunks(reply) {
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
			if fl != nil {
				fl.Flush()
			}
		}
	default: // generateContent and anything shaped like it
		cs := geminiChunks(reply)
		writeJSON(w, geminiMerge(cs))
	}
}

// geminiPath splits /v1beta/models/<model>:<method> (any version prefix).
func geminiPath(p string) (model, method string, ok bool) {
	i := strings.Index(p, "/models/")
	if i < 0 {
		return "", "", false
	}
	rest := p[i+len("/models/"):]
	model, method, ok = strings.Cut(rest, ":")
	return model, method, ok && model != "" && method != ""
}

type geminiPart struct {
	Text         string              `json:"text,omitempty"`
	FunctionCall *GeminiFunctionCall `json:"functionCall,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiCandidate struct {
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
}

type geminiUsageWire struct {
	GeminiUsage
	Total int64 `json:"totalTokenCount"`
}

type geminiChunk struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata *geminiUsageWire  `json:"usageMetadata,omitempty"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

// geminiChunks renders a reply as stream chunks: text in up to two parts,
// the finish reason and usage on the last.
func geminiChunks(r GeminiReply) []geminiChunk {
	var parts [][]geminiPart
	switch {
	case r.Call != nil:
		parts = [][]geminiPart{{{FunctionCall: r.Call}}}
	case len(r.Text) > 1:
		h := len(r.Text) / 2
		parts = [][]geminiPart{{{Text: r.Text[:h]}}, {{Text: r.Text[h:]}}}
	default:
		parts = [][]geminiPart{{{Text: r.Text}}}
	}
	u := &geminiUsageWire{GeminiUsage: r.Usage, Total: r.Usage.Prompt + r.Usage.Output + r.Usage.Thoughts}
	out := make([]geminiChunk, len(parts))
	for i, p := range parts {
		out[i] = geminiChunk{
			Candidates:   []geminiCandidate{{Content: geminiContent{Role: "model", Parts: p}}},
			ModelVersion: r.ModelVersion,
			ResponseID:   "fake-response",
		}
	}
	last := &out[len(out)-1]
	last.Candidates[0].FinishReason = "STOP"
	last.UsageMetadata = u
	return out
}

// geminiMerge folds stream chunks into one non-streamed answer.
func geminiMerge(cs []geminiChunk) geminiChunk {
	m := cs[len(cs)-1]
	var parts []geminiPart
	for _, c := range cs {
		parts = append(parts, c.Candidates[0].Content.Parts...)
	}
	if len(parts) > 1 && parts[0].FunctionCall == nil {
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		parts = []geminiPart{{Text: sb.String()}}
	}
	m.Candidates = []geminiCandidate{{Content: geminiContent{Role: "model", Parts: parts}, FinishReason: "STOP"}}
	return m
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}
