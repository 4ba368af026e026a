package acpnet_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

func TestTR17_OriginAllowlist(t *testing.T) {
	_, url := serve(t, newTestAgent, &acpnet.ServerOptions{AllowedOrigins: []string{"https://editor.example"}})
	post := func(origin string) int {
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(wsInitialize))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, post(""), "no Origin: not a browser")
	assert.Equal(t, 200, post("https://EDITOR.example"), "allowlisted, any case")
	assert.Equal(t, 403, post("https://evil.example"))
	assert.Equal(t, 403, post("null"))

	// The upgrade too, before any connection exists.
	_, resp, err := websocket.Dial(testCtx(t), "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	require.Error(t, err)
	assert.Equal(t, 403, resp.StatusCode)

	// By default every Origin is refused.
	_, url = serve(t, newTestAgent, nil)
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, url, nil)
	req.Header.Set("Origin", "http://127.0.0.1")
	req.Header.Set("Accept", "text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 403, resp.StatusCode)
}

func TestTR17_HostAllowlist(t *testing.T) {
	_, url := serve(t, newTestAgent, &acpnet.ServerOptions{AllowedHosts: []string{"127.0.0.1", "localhost"}})
	post := func(host string) int {
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(wsInitialize))
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, post(""), "127.0.0.1:port")
	assert.Equal(t, 200, post("localhost:9"))
	assert.Equal(t, 403, post("attacker.example"), "a rebound name")
}

func TestTR17_AuthorizeRunsBeforeAnyLookup(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	_, url := serve(t, newTestAgent, &acpnet.ServerOptions{Authorize: func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		seen = append(seen, r.Method)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "who are you", http.StatusUnauthorized)
			return false
		}
		return true
	}})
	// An unknown connection is 401, not 404: nothing is looked up first.
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodDelete, url, nil)
	req.Header.Set(acpnet.HeaderConnectionID, "00000000-0000-4000-8000-000000000000")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
	_, resp, err = websocket.Dial(testCtx(t), "ws"+strings.TrimPrefix(url, "http"), nil)
	require.Error(t, err)
	assert.Equal(t, 401, resp.StatusCode)

	// With the credential, the whole flow runs, over both transports.
	for _, u := range []string{url, "ws" + strings.TrimPrefix(url, "http")} {
		stream, err := acpnet.Dial(testCtx(t), u, &acpnet.DialOptions{Header: http.Header{"Authorization": {"Bearer good"}}})
		require.NoError(t, err)
		side := acpsdk.NewClientSide(stream, stream, &recordingClient{}, nil)
		_, err = side.Agent().Initialize(testCtx(t), &gen.InitializeRequest{ProtocolVersion: 1})
		require.NoError(t, err)
		_, err = side.Agent().NewSession(testCtx(t), &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
		require.NoError(t, err)
		require.NoError(t, side.Close())
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Subset(t, seen, []string{"POST", "GET", "DELETE"})
}

func TestTR17_CredentialsNeverLogged(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := acpnet.NewHandler(newTestAgent, &acpnet.ServerOptions{Logger: logger, MaxMessageBytes: 1 << 10})
	srv := httptest.NewServer(h)
	defer srv.Close()
	header := http.Header{"Authorization": {"Bearer s3cret-token"}, "Cookie": {"session=c00kie-value"}}
	for _, u := range []string{srv.URL, "ws" + strings.TrimPrefix(srv.URL, "http")} {
		stream, err := acpnet.Dial(testCtx(t), u, &acpnet.DialOptions{Header: header, Logger: logger})
		require.NoError(t, err)
		side := acpsdk.NewClientSide(stream, stream, &recordingClient{}, nil)
		_, err = side.Agent().Initialize(testCtx(t), &gen.InitializeRequest{ProtocolVersion: 1})
		require.NoError(t, err)
		// A bound broken, which is logged.
		_ = side.Call(testCtx(t), "_big", map[string]string{"pad": strings.Repeat("x", 2<<10)}, nil)
		_ = side.Close()
	}
	require.NoError(t, h.Close())
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, logs.String())
	assert.NotContains(t, logs.String(), "s3cret")
	assert.NotContains(t, logs.String(), "c00kie")
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestTR17_ConnectionIDsAreRandom(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	ids := map[string]bool{}
	for range 50 {
		r := rawConnect(t, url)
		assert.False(t, ids[r.id], "a repeated id")
		ids[r.id] = true
	}
}

// TR-4: a session id that contradicts the session of the request being
// answered is refused; one left out is tolerated (other clients omit it).
func TestTR4_AnswersToSessionRequests(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	r := rawConnect(t, url)
	conn := r.stream("")
	sid := r.newSession(conn)
	session := r.stream(sid)
	ask := func(id int) string {
		require.Equal(t, 202, r.post(prompt(id, sid, "permission please"), acpnet.HeaderSessionID, sid))
		for {
			msg := session.next()
			if string(msg["method"]) == `"session/request_permission"` {
				return string(msg["id"])
			}
		}
	}
	answer := func(reqID string) string {
		return `{"jsonrpc":"2.0","id":` + reqID + `,"result":{"outcome":{"outcome":"cancelled"}}}`
	}
	reqID := ask(3)
	assert.Equal(t, 400, r.post(answer(reqID), acpnet.HeaderSessionID, "another"), "mismatched")
	assert.Equal(t, 202, r.post(answer(reqID)), "left out")
	for {
		if msg := session.next(); string(msg["id"]) == "3" {
			break // the turn ended: the agent had its answer
		}
	}
	assert.Equal(t, 202, r.post(answer(ask(4)), acpnet.HeaderSessionID, sid), "the right one")
}

// TR-12: HTTP/2 where TLS negotiates it.
func TestTR12_HTTP2OverTLS(t *testing.T) {
	h := acpnet.NewHandler(newTestAgent, nil)
	var mu sync.Mutex
	protos := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.Proto] = true
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	defer h.Close()
	stream, err := acpnet.Dial(testCtx(t), srv.URL, &acpnet.DialOptions{HTTPClient: srv.Client()})
	require.NoError(t, err)
	client := &recordingClient{}
	side := acpsdk.NewClientSide(stream, stream, client, nil)
	defer side.Close()
	ctx := context.Background()
	_, err = side.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	_, err = side.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sess.SessionID, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "over h2"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{string(sess.SessionID) + ": over", string(sess.SessionID) + ": h2"}, client.take())
	require.NoError(t, side.Close())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]bool{"HTTP/2.0": true}, protos)
}

// TR-17: an address without a host listens on loopback, never on every
// interface; every interface is what an explicit unspecified host says.
func TestTR17_ListenWithoutHostIsLoopback(t *testing.T) {
	for _, addr := range []string{":0", "localhost:0", "127.0.0.1:0"} {
		ln, err := acpnet.Listen(addr)
		require.NoError(t, err, addr)
		ip := ln.Addr().(*net.TCPAddr).IP
		ln.Close()
		assert.True(t, ip.IsLoopback(), "%s listened on %v", addr, ip)
	}
	ln, err := acpnet.Listen("0.0.0.0:0")
	require.NoError(t, err)
	ip := ln.Addr().(*net.TCPAddr).IP
	ln.Close()
	assert.True(t, ip.IsUnspecified(), "0.0.0.0:0 listened on %v", ip)

	_, err = acpnet.Listen("no-port")
	assert.Error(t, err)
}
