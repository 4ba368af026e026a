package acpnet_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

const wsInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// rawSocket is a WebSocket client that sends and reads frames as given.
type rawSocket struct {
	t    *testing.T
	ctx  context.Context
	conn *websocket.Conn
	id   string
}

func dialRaw(t *testing.T, url string, protocols ...string) *rawSocket {
	t.Helper()
	ctx := testCtx(t)
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{Subprotocols: protocols})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.CloseNow() })
	conn.SetReadLimit(-1)
	return &rawSocket{t: t, ctx: ctx, conn: conn, id: resp.Header.Get(acpnet.HeaderConnectionID)}
}

func (s *rawSocket) send(text string) {
	s.t.Helper()
	require.NoError(s.t, s.conn.Write(s.ctx, websocket.MessageText, []byte(text)))
}

// next reads the next message, skipping session/update notifications.
func (s *rawSocket) next() map[string]json.RawMessage {
	s.t.Helper()
	for {
		typ, data, err := s.conn.Read(s.ctx)
		require.NoError(s.t, err)
		require.Equal(s.t, websocket.MessageText, typ)
		var msg map[string]json.RawMessage
		require.NoError(s.t, json.Unmarshal(data, &msg), "%s", data)
		if string(msg["method"]) != `"session/update"` {
			return msg
		}
	}
}

// closed reads until the socket closes and returns the close status.
func (s *rawSocket) closed() websocket.StatusCode {
	s.t.Helper()
	for {
		_, _, err := s.conn.Read(s.ctx)
		if err != nil {
			require.NoError(s.t, s.ctx.Err(), "the socket did not close")
			return websocket.CloseStatus(err)
		}
	}
}

func errorCode(t *testing.T, msg map[string]json.RawMessage) int {
	t.Helper()
	var e struct {
		Code int `json:"code"`
	}
	require.NoError(t, json.Unmarshal(msg["error"], &e), "%v", msg)
	return e.Code
}

func TestTR13_UpgradeCarriesTheConnectionID(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	s := dialRaw(t, url)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, s.id)
	assert.Empty(t, s.conn.Subprotocol(), "none required")
	s = dialRaw(t, url, "acp.v1", "other")
	assert.Equal(t, "acp.v1", s.conn.Subprotocol(), "the first offer is echoed")
}

func TestTR13_BinaryFramesIgnored(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	s := dialRaw(t, url)
	require.NoError(t, s.conn.Write(s.ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":9,"method":"nope"}`)))
	s.send(wsInitialize)
	msg := s.next()
	assert.JSONEq(t, `1`, string(msg["id"]))
	assert.Contains(t, msg, "result")
}

func TestTR14_BeforeInitialize(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	s := dialRaw(t, url)
	s.send(`{"jsonrpc":`)
	assert.Equal(t, -32700, errorCode(t, s.next()), "unparsable: answered, socket kept")
	s.send(`[` + wsInitialize + `]`)
	msg := s.next()
	assert.Equal(t, -32600, errorCode(t, msg), "a batch")
	assert.JSONEq(t, `null`, string(msg["id"]))
	s.send(`5`)
	assert.Equal(t, -32600, errorCode(t, s.next()), "not an object")
	s.send(`{"jsonrpc":"2.0","id":4,"result":{}}`) // response-shaped: ignored
	s.send(wsInitialize)
	assert.Contains(t, s.next(), "result")
}

func TestTR14_FirstMessageMustBeInitialize(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	for _, first := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`,
	} {
		s := dialRaw(t, url)
		s.send(first)
		assert.Equal(t, websocket.StatusProtocolError, s.closed(), "first message %s", first)
	}
}

func TestTR14_AfterInitialize(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	s := dialRaw(t, url)
	s.send(wsInitialize)
	s.next()
	s.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	msg := s.next()
	assert.Equal(t, -32600, errorCode(t, msg), "a second initialize")
	assert.JSONEq(t, `2`, string(msg["id"]))
	s.send(`[{"jsonrpc":"2.0","id":3,"method":"session/new"}]`)
	msg = s.next()
	assert.Equal(t, -32600, errorCode(t, msg), "a batch")
	assert.JSONEq(t, `null`, string(msg["id"]))
	s.send("{\"jsonrpc\":\n")
	assert.Equal(t, -32700, errorCode(t, s.next()), "unparsable, over two lines")
	s.send("{\"jsonrpc\":\"2.0\",\n\"id\":4,\r\n\"method\":\"session/new\",\"params\":{\"cwd\":\"/\",\"mcpServers\":[]}}")
	msg = s.next()
	assert.JSONEq(t, `4`, string(msg["id"]), "JSON over several lines is one message")
	assert.Contains(t, msg, "result")
}

func TestTR14_FailedInitializeCloses1011(t *testing.T) {
	_, url := serve(t, func(io.ReadWriteCloser, acpnet.Peer) *acpsdk.Conn { return nil }, nil)
	s := dialRaw(t, url)
	s.send(wsInitialize)
	msg := s.next()
	assert.Equal(t, -32603, errorCode(t, msg))
	assert.Contains(t, string(msg["error"]), "Initialize failed")
	assert.Equal(t, websocket.StatusInternalError, s.closed())
}

func TestTR15_CloseCodes(t *testing.T) {
	t.Run("1001 when the server shuts down", func(t *testing.T) {
		h, url := serve(t, newTestAgent, nil)
		s := dialRaw(t, url)
		s.send(wsInitialize)
		s.next()
		require.NoError(t, h.Close())
		assert.Equal(t, websocket.StatusGoingAway, s.closed())
	})
	t.Run("1008 for an id over the bound", func(t *testing.T) {
		_, url := serve(t, newTestAgent, nil)
		s := dialRaw(t, url)
		s.send(wsInitialize)
		s.next()
		s.send(`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 1<<20) + `","method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
		assert.Equal(t, websocket.StatusPolicyViolation, s.closed())
	})
	t.Run("1008 for a message over the bound", func(t *testing.T) {
		_, url := serve(t, newTestAgent, &acpnet.ServerOptions{MaxMessageBytes: 1 << 10})
		s := dialRaw(t, url)
		s.send(wsInitialize)
		s.next()
		s.send(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", 2<<10) + `"}`)
		assert.Equal(t, websocket.StatusPolicyViolation, s.closed())
	})
	t.Run("no code when the agent ends", func(t *testing.T) {
		_, url := serve(t, func(stream io.ReadWriteCloser, p acpnet.Peer) *acpsdk.Conn {
			a := &testAgent{}
			side := acpsdk.NewAgentSide(stream, stream, a, &acpsdk.SideOptions{Middleware: func(ctx context.Context, req *acpsdk.Request, next acpsdk.HandlerFunc) (any, error) {
				if req.Method == "_quit" {
					go a.side.Load().Close()
					return nil, nil
				}
				return next(ctx, req)
			}})
			a.side.Store(side)
			return side.Conn()
		}, nil)
		stream, err := acpnet.DialWebSocket(testCtx(t), "ws"+strings.TrimPrefix(url, "http"), nil)
		require.NoError(t, err)
		client := acpsdk.NewClientSide(stream, stream, &recordingClient{}, nil)
		defer client.Close()
		_, err = client.Agent().Initialize(testCtx(t), &gen.InitializeRequest{ProtocolVersion: 1})
		require.NoError(t, err)
		require.NoError(t, client.Notify(testCtx(t), "_quit", map[string]any{}))
		<-client.Done()
		assert.ErrorIs(t, client.Err(), io.EOF, "a normal end, not a *CloseError")
		var ce *acpnet.CloseError
		assert.False(t, errors.As(client.Err(), &ce))
	})
}
