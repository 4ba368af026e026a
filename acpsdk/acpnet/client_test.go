package acpnet_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

// interposer serves the Handler, except for the requests its hook
// answers itself (hook returns true once it wrote a response).
type interposer struct {
	h    http.Handler
	mu   sync.Mutex
	hook func(w http.ResponseWriter, r *http.Request, body []byte) bool
	seen []*http.Request
	// served is told of every request the Handler finished serving.
	served func(r *http.Request)
}

func (i *interposer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	i.mu.Lock()
	hook := i.hook
	i.seen = append(i.seen, r.Clone(r.Context()))
	i.mu.Unlock()
	if hook != nil && hook(w, r, body) {
		return
	}
	i.h.ServeHTTP(w, r)
	i.mu.Lock()
	served := i.served
	i.mu.Unlock()
	if served != nil {
		served(r)
	}
}

func (i *interposer) setHook(f func(w http.ResponseWriter, r *http.Request, body []byte) bool) {
	i.mu.Lock()
	i.hook = f
	i.mu.Unlock()
}

func (i *interposer) requests() []*http.Request {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]*http.Request(nil), i.seen...)
}

// serveInterposed is serve with an interposer in front of the Handler.
func serveInterposed(t *testing.T) (*interposer, *acpnet.Handler, string) {
	t.Helper()
	h := acpnet.NewHandler(newTestAgent, nil)
	ip := &interposer{h: h}
	srv := httptest.NewServer(ip)
	t.Cleanup(func() {
		require.NoError(t, h.Close())
		srv.Close()
	})
	return ip, h, srv.URL + "/acp"
}

// connect dials url over HTTP and runs initialize.
func connect(t *testing.T, url string, impl gen.Client) (*acpsdk.ClientSide, *acpnet.HTTPStream) {
	t.Helper()
	stream, err := acpnet.NewHTTPStream(url, nil)
	require.NoError(t, err)
	side := acpsdk.NewClientSide(stream, stream, impl, nil)
	t.Cleanup(func() { _ = side.Close() })
	_, err = side.Agent().Initialize(testCtx(t), &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	require.NoError(t, err)
	return side, stream
}

func TestTR11_OtherStatusFailsOnlyThatRequest(t *testing.T) {
	ip, _, url := serveInterposed(t)
	side, _ := connect(t, url, &recordingClient{})
	ip.setHook(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"_boom"`)) {
			http.Error(w, `{"why":"boom"}`, http.StatusInternalServerError)
			return true
		}
		return false
	})
	err := side.Call(testCtx(t), "_boom", map[string]any{}, nil)
	var werr *acpsdk.Error
	require.ErrorAs(t, err, &werr)
	assert.EqualValues(t, -32603, werr.Code)
	assert.Contains(t, werr.Message, "500")
	var data struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	}
	require.NoError(t, json.Unmarshal(werr.Data, &data))
	assert.Equal(t, 500, data.Status)
	assert.JSONEq(t, `{"why":"boom"}`, string(data.Body), "a JSON body is kept as JSON")

	// The connection is still up.
	_, err = side.Agent().NewSession(testCtx(t), &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
}

func TestTR11_ConnectionFailureStatusesCloseTheTransport(t *testing.T) {
	for _, code := range []int{401, 403, 404, 410} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			ip, _, url := serveInterposed(t)
			side, _ := connect(t, url, &recordingClient{})
			ip.setHook(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if r.Method == http.MethodPost {
					http.Error(w, "no", code)
					return true
				}
				return false
			})
			// The call fails with the status; the transport is closed, so
			// the connection ends with it too.
			_, err := side.Agent().NewSession(testCtx(t), &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
			var se *acpnet.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, code, se.StatusCode)
			<-side.Done()
			require.ErrorIs(t, side.Err(), acpsdk.ErrClosed)
			require.ErrorAs(t, side.Err(), &se)
			assert.Equal(t, code, se.StatusCode)
		})
	}
}

func TestTR11_ConflictFailsTheSessionUntilReattached(t *testing.T) {
	ip, _, url := serveInterposed(t)
	side, _ := connect(t, url, &recordingClient{})
	ctx := testCtx(t)
	sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	other, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	refuse := true
	var mu sync.Mutex
	// The first stream of the session ends on the server once the client
	// drops it; a test that reopens it at once could meet 409 (TR-5).
	streamEnded := make(chan struct{})
	var endOnce sync.Once
	ip.mu.Lock()
	ip.served = func(r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get(acpnet.HeaderSessionID) == string(sess.SessionID) {
			endOnce.Do(func() { close(streamEnded) })
		}
	}
	ip.mu.Unlock()
	ip.setHook(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if refuse && r.Method == http.MethodPost && r.Header.Get(acpnet.HeaderSessionID) == string(sess.SessionID) {
			http.Error(w, "elsewhere", http.StatusConflict)
			return true
		}
		return false
	})
	prompt := func(sid gen.SessionID) error {
		_, err := side.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sid, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "hi"}}})
		return err
	}
	var werr *acpsdk.Error
	require.ErrorAs(t, prompt(sess.SessionID), &werr)
	assert.Contains(t, werr.Message, "409")
	require.NoError(t, prompt(other.SessionID), "another session is not affected")

	// The failure sticks: no POST is even sent for the session.
	mu.Lock()
	refuse = false
	mu.Unlock()
	before := len(ip.requests())
	require.ErrorAs(t, prompt(sess.SessionID), &werr)
	assert.Len(t, ip.requests(), before)

	// session/load reattaches it: the POST goes out and the session's
	// stream opens again.
	<-streamEnded
	err = side.Conn().Call(ctx, "session/load", &gen.LoadSessionRequest{SessionID: sess.SessionID, Cwd: "/", McpServers: []gen.McpServer{}}, nil)
	require.NoError(t, err)
	require.NoError(t, prompt(sess.SessionID))
}

func TestTR11_CookiesKeptForTheConnection(t *testing.T) {
	ip, _, url := serveInterposed(t)
	ip.setHook(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"initialize"`)) {
			http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "node-7"})
		}
		return false
	})
	side, _ := connect(t, url, &recordingClient{})
	_, err := side.Agent().NewSession(testCtx(t), &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.NoError(t, side.Close())
	reqs := ip.requests()
	require.Greater(t, len(reqs), 3)
	assert.Empty(t, reqs[0].Header.Get("Cookie"), "initialize")
	deleted := false
	for _, r := range reqs[1:] {
		assert.Equal(t, "affinity=node-7", r.Header.Get("Cookie"), "%s %s", r.Method, r.Header.Get(acpnet.HeaderSessionID))
		deleted = deleted || r.Method == http.MethodDelete
	}
	assert.True(t, deleted, "Close sends DELETE")
}

func TestTR10_ConnectionStreamEndIsTheEnd(t *testing.T) {
	_, h, url := serveInterposed(t)
	side, _ := connect(t, url, &recordingClient{})
	// Its answer (-32601) comes on the connection stream, which is then
	// open; no session stream is.
	err := side.Call(testCtx(t), "_ping", map[string]any{}, nil)
	require.ErrorIs(t, err, acpsdk.ErrMethodNotFound)
	require.NoError(t, h.Close()) // ends every stream
	<-side.Done()
	assert.ErrorIs(t, side.Err(), acpnet.ErrStreamEnded)
}

func TestTR10_SessionStreamEndFailsItsRequestsAndReopens(t *testing.T) {
	ip, _, url := serveInterposed(t)
	ctx := testCtx(t)
	// The first stream the client opens for a session is the interposer's:
	// headers, then nothing until end, then the end of the stream.
	opened, end, posted := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, postOnce sync.Once
	ip.setHook(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		sid := r.Header.Get(acpnet.HeaderSessionID)
		switch {
		case sid == "":
			return false
		case r.Method == http.MethodPost:
			postOnce.Do(func() { close(posted) })
			return false
		case r.Method != http.MethodGet:
			return false
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(opened)
		<-end
		return true
	})
	side, _ := connect(t, url, &recordingClient{})
	sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	<-opened
	prompt := func() error {
		_, err := side.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sess.SessionID, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "x"}}})
		return err
	}
	failed := make(chan error, 1)
	go func() { failed <- prompt() }()
	<-posted // the prompt is in flight; its answer waits on the session's real stream
	close(end)
	err = <-failed
	var werr *acpsdk.Error
	require.ErrorAs(t, err, &werr, "the in-flight request fails when its session's stream ends")
	assert.EqualValues(t, -32603, werr.Code)
	assert.Contains(t, werr.Message, acpnet.ErrSessionStreamEnded.Error())

	// The next message opens the stream again, and works.
	require.NoError(t, prompt())
	gets := 0
	for _, r := range ip.requests() {
		if r.Method == http.MethodGet && r.Header.Get(acpnet.HeaderSessionID) == string(sess.SessionID) {
			gets++
		}
	}
	assert.Equal(t, 2, gets)
}

// Everything the agent sends that is not a JSON object is skipped, not
// passed to the connection (TR-6).
func TestTR6_NonObjectEventsSkipped(t *testing.T) {
	ip, _, url := serveInterposed(t)
	ip.setHook(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Method == http.MethodGet && r.Header.Get(acpnet.HeaderSessionID) == "" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "data: 5\n\ndata: [1]\n\ndata: {nope\n\ndata: \"s\"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return true
		}
		return false
	})
	var observed []string
	var mu sync.Mutex
	stream, err := acpnet.NewHTTPStream(url, nil)
	require.NoError(t, err)
	side := acpsdk.NewClientSide(stream, stream, &recordingClient{}, &acpsdk.SideOptions{Options: acpsdk.Options{Tap: func(d acpsdk.Direction, line []byte) {
		mu.Lock()
		observed = append(observed, d.String()+" "+string(line))
		mu.Unlock()
	}}})
	defer side.Close()
	_, err = side.Agent().Initialize(testCtx(t), &gen.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	require.NoError(t, side.Close())
	mu.Lock()
	defer mu.Unlock()
	for _, l := range observed {
		assert.False(t, strings.HasPrefix(l, "in ") && !strings.HasPrefix(l, `in {`), "passed on: %s", l)
	}
}

// A client without a session's stream still gets session/load's answer,
// on the connection's stream (TR-7); with one it follows the replay.
func TestTR7_LoadAnswerWithoutASessionStream(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	post := func(id, body string, hdr ...string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if id != "" {
			req.Header.Set(acpnet.HeaderConnectionID, id)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		if id == "" {
			return map[bool]int{true: 1}[resp.Header.Get(acpnet.HeaderConnectionID) != ""]
		}
		return resp.StatusCode
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	id := resp.Header.Get(acpnet.HeaderConnectionID)
	require.Equal(t, 202, post(id, `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}`, acpnet.HeaderSessionID, "s"))
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(acpnet.HeaderConnectionID, id)
	stream, err := http.DefaultClient.Do(get)
	require.NoError(t, err)
	defer stream.Body.Close()
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("\n\n")) {
		n, err := stream.Body.Read(buf)
		require.NoError(t, err)
		got = append(got, buf[:n]...)
	}
	assert.Contains(t, string(got), `"id":2,"result"`)
	_ = errors.New
}

// A closed HTTPStream leaves nothing running while its server lives on:
// neither its event streams nor the keep-alive connections its POSTs and
// DELETE went over, on either end (TR-8).
func TestTR8_ClosedHTTPStreamLeavesNoGoroutine(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	serving := goleak.IgnoreCurrent()
	ctx := testCtx(t)
	side := dialClient(t, url, &recordingClient{})
	_, err := side.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	require.NoError(t, err)
	_, err = side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	require.NoError(t, side.Close())
	goleak.VerifyNone(t, serving)
}
