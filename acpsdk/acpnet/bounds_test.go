package acpnet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

// Every bound of TR-18 meets a peer that breaks it: each answers with its
// documented status or close code, and what the connection holds stays
// within the bound.

// smallBounds keep the tests fast: 64 KiB of output, 300 ms of stall.
var smallBounds = acpnet.ServerOptions{MaxBufferedBytes: 64 << 10, MaxOutputStall: 300 * time.Millisecond}

// chunkLimit is the largest message the agent sends in these tests: the
// bound may be passed by one message, never more.
const chunkLimit = 512

// rawWithSession opens a connection with plain requests, its connection
// stream and one session.
func rawWithSession(t *testing.T, h *acpnet.Handler, url string) (r *rawHTTP, conn *rawEvents, sid string, c *acpnet.TestConn) {
	t.Helper()
	r = rawConnect(t, url)
	conn = r.stream("")
	sid = r.newSession(conn)
	return r, conn, sid, h.Conn(r.id)
}

// waitGone waits for a connection to be retired.
func waitGone(t *testing.T, c *acpnet.TestConn) {
	t.Helper()
	select {
	case <-c.Gone():
	case <-testCtx(t).Done():
		t.Fatalf("the connection was not closed: %+v", c.Stats())
	}
}

func TestTR18_AbsentReaderBoundsOutputThenCloses(t *testing.T) {
	h, url := serve(t, newTestAgent, &smallBounds)
	r, conn, sid, c := rawWithSession(t, h, url)
	// A turn of 100,000 updates for a session whose stream nobody opens.
	require.Equal(t, 202, r.post(prompt(3, sid, "notify 100000"), acpnet.HeaderSessionID, sid))
	waitGone(t, c)
	st := c.Stats()
	assert.ErrorIs(t, st.Why, acpnet.ErrLimit)
	assert.Contains(t, st.Why.Error(), "MaxOutputStall")
	assert.LessOrEqual(t, st.PeakBuffered, smallBounds.MaxBufferedBytes+chunkLimit, "output held for no reader")
	conn.drain() // the connection's stream ends
	assert.Equal(t, 404, r.post(prompt(4, sid, "x"), acpnet.HeaderSessionID, sid))
}

func TestTR18_StalledReaderBoundsOutputThenCloses(t *testing.T) {
	h, url := serve(t, newTestAgent, &smallBounds)
	r, conn, sid, c := rawWithSession(t, h, url)
	session := r.stream(sid) // opened, never read: the socket fills, then the queue
	require.Equal(t, 202, r.post(prompt(3, sid, "notify 100000"), acpnet.HeaderSessionID, sid))
	waitGone(t, c)
	st := c.Stats()
	assert.ErrorIs(t, st.Why, acpnet.ErrLimit)
	assert.LessOrEqual(t, st.PeakBuffered, smallBounds.MaxBufferedBytes+chunkLimit)
	session.drain()
	conn.drain()
}

func TestTR18_WebSocketPeerThatNeverReads(t *testing.T) {
	h, url := serve(t, newTestAgent, &smallBounds)
	s := dialRaw(t, url)
	s.send(wsInitialize)
	s.next()
	s.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(s.next()["result"], &res))
	c := h.Conn(s.id)
	s.send(prompt(3, res.SessionID, "notify 100000"))
	// Never read again: the server's writes wait, then the socket closes.
	waitGone(t, c)
	st := c.Stats()
	assert.ErrorIs(t, st.Why, acpnet.ErrLimit)
	assert.Contains(t, st.Why.Error(), "MaxOutputStall")
}

func TestTR18_EndlessPostBodyIs413(t *testing.T) {
	_, url := serve(t, newTestAgent, &acpnet.ServerOptions{MaxMessageBytes: 1 << 10})
	// Declared too long: refused before a byte of it is read.
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(strings.Repeat("x", 2<<10)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 413, resp.StatusCode)

	// Chunked and without end: refused once past the bound.
	req, err = http.NewRequestWithContext(testCtx(t), http.MethodPost, url, endless{})
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 413, resp.StatusCode)
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// fanAgent sends one update to each of N sessions on prompt "fanout N".
func fanAgent(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
	a := &testAgent{}
	side := acpsdk.NewAgentSide(stream, stream, a, &acpsdk.SideOptions{Middleware: func(ctx context.Context, req *acpsdk.Request, next acpsdk.HandlerFunc) (any, error) {
		var n int
		if req.Method == gen.MethodSessionPrompt && strings.Contains(string(req.Params), "fanout") {
			_, _ = fmt.Sscanf(string(req.Params[strings.Index(string(req.Params), "fanout"):]), "fanout %d", &n)
			for i := range n {
				err := a.side.Load().Client().SessionUpdate(ctx, &gen.SessionNotification{
					SessionID: gen.SessionID(fmt.Sprintf("fan-%d", i)),
					Update:    &gen.SessionUpdateAgentMessageChunk{Content: &gen.ContentBlockText{Text: "hi"}},
				})
				if err != nil {
					return nil, err
				}
			}
			return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
		}
		return next(ctx, req)
	}})
	a.side.Store(side)
	return side.Conn()
}

func TestTR18_TenThousandSessionStreams(t *testing.T) {
	t.Run("unread, from the agent: closed at MaxUnreadSessionStreams", func(t *testing.T) {
		h, url := serve(t, fanAgent, nil)
		r, _, sid, c := rawWithSession(t, h, url)
		require.Equal(t, 202, r.post(prompt(3, sid, "fanout 10000"), acpnet.HeaderSessionID, sid))
		waitGone(t, c)
		st := c.Stats()
		assert.ErrorIs(t, st.Why, acpnet.ErrLimit)
		assert.Contains(t, st.Why.Error(), "MaxUnreadSessionStreams")
		assert.Equal(t, acpnet.DefaultMaxUnreadSessionStreams, st.Unread, "never more than the bound")
	})
	t.Run("opened and left by the client: nothing kept", func(t *testing.T) {
		// Over HTTP/2, so that 10,000 streams are not 10,000 TCP
		// connections.
		streams := 10000
		if testing.Short() {
			streams = 1000 // make check's quick loop; make test runs 10,000
		}
		h := acpnet.NewHandler(newTestAgent, nil)
		served := make(chan struct{}, streams)
		ip := &interposer{h: h, served: func(r *http.Request) {
			if r.Method == http.MethodGet {
				served <- struct{}{}
			}
		}}
		srv := httptest.NewUnstartedServer(ip)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		defer h.Close()
		client := srv.Client()
		id := rawConnectWith(t, srv.URL, client)
		c := h.Conn(id)
		open := func(i int) error {
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set(acpnet.HeaderConnectionID, id)
			req.Header.Set(acpnet.HeaderSessionID, fmt.Sprintf("s-%d", i))
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
				return fmt.Errorf("stream %d: %s over %s", i, resp.Status, resp.Proto)
			}
			return nil
		}
		const workers = 8
		errs := make(chan error, workers)
		for w := range workers {
			go func() {
				for i := w; i < streams; i += workers {
					if err := open(i); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range workers {
			require.NoError(t, <-errs)
		}
		// Each stream is forgotten once the server has seen its reader
		// leave (the reset reaches it after the client moved on).
		for range streams {
			select {
			case <-served:
			case <-testCtx(t).Done():
				t.Fatalf("not every stream ended: %+v", c.Stats())
			}
		}
		st := c.Stats()
		assert.Zero(t, st.Sessions)
		assert.Zero(t, st.Unread)
	})
}

// rawConnectWith runs initialize with client and returns the connection id.
func rawConnectWith(t *testing.T, url string, client *http.Client) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	return resp.Header.Get(acpnet.HeaderConnectionID)
}

func TestTR18_MegabyteIDs(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	r := rawConnect(t, url)
	conn := r.stream("")
	sid := r.newSession(conn)
	mega := strings.Repeat("x", 1<<20)
	assert.Equal(t, 400, r.post(`{"jsonrpc":"2.0","id":"`+mega+`","method":"session/new","params":{"cwd":"/","mcpServers":[]}}`), "request id")
	long := strings.Repeat("y", 2<<10)
	assert.Equal(t, 400, r.post(prompt(5, long, "x"), acpnet.HeaderSessionID, long), "session id")
	assert.Equal(t, 400, r.post(prompt(6, mega, "x"), acpnet.HeaderSessionID, mega), "a megabyte in the session header")
	huge := strings.Repeat("x", 2<<20)
	assert.Equal(t, 431, r.post(prompt(6, "s", "x"), acpnet.HeaderSessionID, huge), "a header over net/http's bound")
	assert.Equal(t, 202, r.post(prompt(7, sid, "still fine"), acpnet.HeaderSessionID, sid), "the connection lives on")

	t.Run("handed out by the agent: the connection closes", func(t *testing.T) {
		h, url := serve(t, func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
			side := acpsdk.NewAgentSide(stream, stream, &longSessionAgent{}, nil)
			return side.Conn()
		}, nil)
		r := rawConnect(t, url)
		c := h.Conn(r.id)
		r.stream("")
		require.Equal(t, 202, r.post(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`))
		waitGone(t, c)
		assert.ErrorIs(t, c.Stats().Why, acpnet.ErrLimit)
	})
}

// longSessionAgent hands out a session id of 2 KiB.
type longSessionAgent struct{ testAgent }

func (*longSessionAgent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: gen.SessionID(strings.Repeat("z", 2<<10))}, nil
}

func TestTR18_WaitingBodiesAre503(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	_, url := serve(t, func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
		side := acpsdk.NewAgentSide(stream, stream, &testAgent{}, &acpsdk.SideOptions{
			Options: acpsdk.Options{MaxQueuedMessages: 1},
			Middleware: func(ctx context.Context, req *acpsdk.Request, next acpsdk.HandlerFunc) (any, error) {
				if req.Method == "_block" {
					select { // the dispatcher stops here: nothing more is read
					case <-release:
					case <-ctx.Done():
					}
				}
				return nil, nil
			},
		})
		return side.Conn()
	}, &acpnet.ServerOptions{MaxBufferedBytes: 32 << 10})
	r := rawConnect(t, url)
	require.Equal(t, 202, r.post(`{"jsonrpc":"2.0","method":"_block"}`))
	big := `{"jsonrpc":"2.0","method":"_fill","params":{"pad":"` + strings.Repeat("p", 8<<10) + `"}}`
	const posts = 40
	statuses := make(chan int, posts)
	ctx := testCtx(t)
	for range posts {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(big))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(acpnet.HeaderConnectionID, r.id)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- -1
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	// The bodies that found room in the pipe are 202 at once; those that
	// then wait for the agent are 202 once it reads again; the rest, over
	// MaxBufferedBytes of waiting bodies, are refused at once.
	count := map[int]int{}
	for count[503] == 0 {
		code := <-statuses
		require.Contains(t, []int{202, 503}, code)
		count[code]++
	}
	once.Do(func() { close(release) })
	for range posts - count[202] - count[503] {
		count[<-statuses]++
	}
	assert.Positive(t, count[202])
	assert.Equal(t, posts, count[202]+count[503], "%v", count)
}

func TestTR18_MaxConnectionsIs503(t *testing.T) {
	_, url := serve(t, newTestAgent, &acpnet.ServerOptions{MaxConnections: 2})
	rawConnect(t, url)
	rawConnect(t, url)
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	_, resp, err = websocket.Dial(testCtx(t), "ws"+strings.TrimPrefix(url, "http"), nil)
	require.Error(t, err)
	assert.Equal(t, 503, resp.StatusCode)
}
