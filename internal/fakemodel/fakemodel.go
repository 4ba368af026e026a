// Package fakemodel serves fake model APIs on 127.0.0.1 for tests that run
// real agent runtimes offline: the runtime is real, only the model it calls
// is scripted. One Server answers every API this package knows (Anthropic
// Messages, OpenAI Responses, and whatever else registers itself) and, as
// an HTTP(S) proxy, refuses to forward anything, so a runtime pointed at it
// with HTTPS_PROXY/HTTP_PROXY cannot reach another host.
//
// A Server lives no longer than its test (and at most Options.Lifetime),
// answers at most Options.MaxRequests model requests, and records every
// request it receives.
//
// The surface shared by this package's files is small. Tests use Start (or
// New), Options, Script (Text is the simplest), Reply, ToolCall and the
// recorded Request. An API file (anthropic.go, openai.go) registers an api
// from init with registerAPI and answers with (*Server).reply for the
// script's Reply, chunks and (*Server).slowChunks for the stream's text,
// and startSSE/sse or answerJSON for the wire.
package fakemodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
)

// Reply is one scripted model answer. Text is streamed in small chunks;
// ToolCall, when set, follows the text as a request to run a tool; Slow
// keeps streaming text until the client goes away, the server closes or
// Options.SlowFor passes. Usage, when set, is the token usage the answer
// reports; nil reports DefaultUsage.
type Reply struct {
	Text     string
	ToolCall *ToolCall
	Slow     bool
	Usage    *Usage
}

// Usage is the token usage one answer reports, in the API's own terms:
// Anthropic's input_tokens leave out CacheRead and CacheWrite, which it
// reports beside them (cache_read_input_tokens,
// cache_creation_input_tokens); OpenAI's input_tokens include CacheRead
// (input_tokens_details.cached_tokens) and its output_tokens include
// Reasoning (output_tokens_details.reasoning_tokens). Anthropic has no
// reasoning figure and OpenAI no cache-write one; each ignores the other's.
type Usage struct {
	Input, Output         int64
	CacheRead, CacheWrite int64
	Reasoning             int64
}

// DefaultUsage is what an answer without a scripted Usage reports.
var DefaultUsage = Usage{Input: 10, Output: 5}

// usage is the reply's usage, DefaultUsage when none was scripted.
func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return DefaultUsage
}

// ToolCall is a tool the model asks the runtime to run. Input is the JSON
// object of arguments, as the API carries it.
type ToolCall struct {
	ID    string
	Name  string
	Input string
}

// Request is one request the server received, as recorded. API names the
// API that answered it ("anthropic", "openai", …), or is "proxy" for a
// refused proxy request and "" for a path no API serves.
type Request struct {
	API    string
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Contains reports whether the request's body contains s.
func (r Request) Contains(s string) bool { return bytes.Contains(r.Body, []byte(s)) }

// HasToolResult reports whether the request carries a tool's result back
// to the model (Anthropic tool_result, OpenAI function_call_output).
func (r Request) HasToolResult() bool {
	return r.Contains(`"type":"tool_result"`) || r.Contains(`"type":"function_call_output"`)
}

// OffersTools reports whether the request offers the model tools: the
// agent's own loop does, side requests (a session title) do not.
func (r Request) OffersTools() bool { return r.Contains(`"tools":[{`) }

// Script chooses the reply to one model request. It runs on the server's
// goroutines, one call at a time.
type Script func(Request) Reply

// Text is a Script that answers every request with text.
func Text(text string) Script { return func(Request) Reply { return Reply{Text: text} } }

// Options bound a Server. Zero fields take the defaults below.
type Options struct {
	// MaxRequests bounds the model requests answered (default 64); past
	// it, every model request is answered 400 and counted in Overflow.
	MaxRequests int
	// Lifetime bounds how long the server runs (default 3 minutes).
	Lifetime time.Duration
	// SlowFor bounds a slow reply's stream (default 30 seconds).
	SlowFor time.Duration
	// ChunkEvery paces a slow reply's chunks (default 50ms).
	ChunkEvery time.Duration
}

// Server is a running fake model API.
type Server struct {
	// URL is the server's base, http://127.0.0.1:PORT, with no trailing
	// slash.
	URL string

	opts   Options
	script Script
	srv    *http.Server
	ln     net.Listener
	done   chan struct{} // closed when the server starts stopping
	served chan struct{} // closed when Serve returned
	closed chan struct{} // closed when Close has finished

	closeOnce sync.Once

	mu       sync.Mutex
	requests []Request
	answered int
	overflow int
	scriptMu sync.Mutex
}

// api is one model API an API file registers: match picks its requests,
// serve answers them.
type api struct {
	name  string
	match func(*http.Request) bool
	serve func(*Server, http.ResponseWriter, *http.Request, Request)
}

var apis []api

// registerAPI adds an API; API files call it from init.
func registerAPI(a api) { apis = append(apis, a) }

// Start starts a server answering with script; it is closed when t's test
// ends.
func Start(t testing.TB, script Script, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := New(script, o)
	if err != nil {
		t.Fatalf("fakemodel: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a server answering with script; the caller must Close it.
func New(script Script, o Options) (*Server, error) {
	if o.MaxRequests <= 0 {
		o.MaxRequests = 64
	}
	if o.Lifetime <= 0 {
		o.Lifetime = 3 * time.Minute
	}
	if o.SlowFor <= 0 {
		o.SlowFor = 30 * time.Second
	}
	if o.ChunkEvery <= 0 {
		o.ChunkEvery = 50 * time.Millisecond
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		opts:   o,
		script: script,
		ln:     ln,
		done:   make(chan struct{}),
		served: make(chan struct{}),
		closed: make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.route), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	go func() {
		t := time.NewTimer(o.Lifetime)
		defer t.Stop()
		select {
		case <-t.C:
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Close stops the server, ending open streams, and returns once every
// handler has; it is safe to call more than once and from several
// goroutines.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s.srv.Shutdown(ctx) != nil {
			_ = s.srv.Close()
		}
		<-s.served
		close(s.closed)
	})
	<-s.closed
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ModelRequests returns the requests an API answered (not the proxy's or
// unknown paths').
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.API != "" && r.API != apiProxy {
			out = append(out, r)
		}
	}
	return out
}

// ModelRequestContains reports whether one model request's body contains
// every one of subs: that a prompt, or a conversation carried over,
// reached the model.
func (s *Server) ModelRequestContains(subs ...string) bool {
	for _, r := range s.ModelRequests() {
		all := true
		for _, sub := range subs {
			all = all && r.Contains(sub)
		}
		if all {
			return true
		}
	}
	return false
}

// Overflow is how many model requests came past Options.MaxRequests.
func (s *Server) Overflow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overflow
}

const apiProxy = "proxy"

// maxBody bounds a recorded request body.
const maxBody = 8 << 20

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	// A proxy request names another host: CONNECT for HTTPS, an absolute
	// URL for plain HTTP. Nothing is forwarded.
	if r.Method == http.MethodConnect || (r.URL.Host != "" && r.URL.Host != strings.TrimPrefix(s.URL, "http://")) {
		rec.API, rec.Path = apiProxy, r.Host
		s.record(rec)
		http.Error(w, "fakemodel: this proxy forwards nothing; tests stay on loopback", http.StatusForbidden)
		return
	}
	for _, a := range apis {
		if !a.match(r) {
			continue
		}
		rec.API = a.name
		if !s.record(rec) {
			http.Error(w, fmt.Sprintf(`{"error":{"type":"invalid_request_error","message":"fakemodel: more than %d model requests"}}`, s.opts.MaxRequests), http.StatusBadRequest)
			return
		}
		a.serve(s, w, r, rec)
		return
	}
	s.record(rec)
	http.NotFound(w, r)
}

// record keeps rec; for a model request it reports whether the request
// bound still has room.
func (s *Server) record(rec Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if rec.API == "" || rec.API == apiProxy {
		return true
	}
	if s.answered >= s.opts.MaxRequests {
		s.overflow++
		return false
	}
	s.answered++
	return true
}

// reply runs the script for a model request.
func (s *Server) reply(rec Request) Reply {
	s.scriptMu.Lock()
	defer s.scriptMu.Unlock()
	if s.script == nil {
		return Reply{Text: "ok"}
	}
	return s.script(rec)
}

// chunks splits text into the pieces a stream sends, a few words each.
func chunks(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 2 {
		out = append(out, strings.Join(words[i:min(i+2, len(words))], ""))
	}
	return out
}

// errStreamEnded: the client went away or the server is closing.
var errStreamEnded = errors.New("fakemodel: stream ended")

// slowChunks calls send with a numbered chunk every ChunkEvery until the
// request ends, the server closes or SlowFor passes.
func (s *Server) slowChunks(ctx context.Context, send func(string) error) error {
	bound := time.NewTimer(s.opts.SlowFor)
	defer bound.Stop()
	tick := time.NewTicker(s.opts.ChunkEvery)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return errStreamEnded
		case <-s.done:
			return errStreamEnded
		case <-bound.C:
			return nil
		case <-tick.C:
			if err := send(fmt.Sprintf("tick %d. ", i)); err != nil {
				return err
			}
		}
	}
}

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, data []byte) error {
	var b bytes.Buffer
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	fmt.Fprintf(&b, "data: %s\n\n", data)
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// startSSE writes the headers of an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// answerJSON answers 200 with v as JSON.
func answerJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
