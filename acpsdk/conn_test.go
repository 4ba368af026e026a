package acpsdk

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// scriptStep is one line the peer sends and the lines it must get back
// (none for a message that is never answered).
type scriptStep struct {
	send string
	want []string
}

// TestScripts runs the wire scripts: each row sends lines to a Conn with
// echoHandler and checks the exact answers, then proves the connection
// still works (sync) and nothing else was written in between.
func TestScripts(t *testing.T) {
	const v = `{"jsonrpc":"2.0",`
	tests := []struct {
		name   string
		steps  []scriptStep
		events []string
	}{
		{
			name:  "request answered",
			steps: []scriptStep{{v + `"id":1,"method":"echo","params":{"a":[1,2.50,"x"]}}`, []string{v + `"id":1,"result":{"a":[1,2.50,"x"]}}`}}},
		},
		{
			name: "ids of every kind echoed byte-exactly",
			steps: []scriptStep{
				{v + `"id":0,"method":"ping"}`, []string{v + `"id":0,"result":"pong"}`}},
				{v + `"id":"abc","method":"ping"}`, []string{v + `"id":"abc","result":"pong"}`}},
				{v + `"id":"\u00e9\"","method":"ping"}`, []string{v + `"id":"\u00e9\"","result":"pong"}`}},
				{v + `"id":null,"method":"ping"}`, []string{v + `"id":null,"result":"pong"}`}},
				{v + `"id":-5,"method":"ping"}`, []string{v + `"id":-5,"result":"pong"}`}},
				{v + `"id":1.0e2,"method":"ping"}`, []string{v + `"id":1.0e2,"result":"pong"}`}},
				{v + `"id":123456789012345678901234567890,"method":"ping"}`, []string{v + `"id":123456789012345678901234567890,"result":"pong"}`}},
			},
		},
		{
			name:   "SDK10 not JSON is -32700 with null id",
			steps:  []scriptStep{{`{"jsonrpc":"2.0","id":4,"method":`, []string{v + `"id":null,"error":{"code":-32700,"message":"parse error"}}`}}},
			events: []string{`unparsable {"jsonrpc":"2.0","id":4,"method":`},
		},
		{
			name:   "SDK10 array is -32600",
			steps:  []scriptStep{{`[` + v + `"id":1,"method":"ping"}]`, []string{v + `"id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC object (batches are not supported)"}}`}}},
			events: []string{"invalid not a JSON-RPC object (batches are not supported)"},
		},
		{
			name:   "SDK10 non-message object is -32600",
			steps:  []scriptStep{{v + `"x":8}`, []string{v + `"id":null,"error":{"code":-32600,"message":"invalid request: object is neither a request, a notification nor a response"}}`}}},
			events: []string{"invalid object is neither a request, a notification nor a response"},
		},
		{
			// JavaScript's result: undefined; an answer would carry the
			// id of one of the peer's own requests.
			name:   "SDK10 id without method is a response, never answered",
			steps:  []scriptStep{{v + `"id":8}`, nil}},
			events: []string{"unmatched 8"},
		},
		{
			name:   "SDK10 unknown method is -32601",
			steps:  []scriptStep{{v + `"id":2,"method":"nope"}`, []string{v + `"id":2,"error":{"code":-32601,"message":"method not found"}}`}}},
			events: []string{"notfound nope 2"},
		},
		{
			name:   "SDK10 unknown extension request is -32601",
			steps:  []scriptStep{{v + `"id":"e","method":"_vendor/thing","params":{}}`, []string{v + `"id":"e","error":{"code":-32601,"message":"method not found"}}`}}},
			events: []string{`notfound _vendor/thing "e"`},
		},
		{
			name:   "SDK10 unknown extension notification ignored",
			steps:  []scriptStep{{v + `"method":"_vendor/note","params":{}}`, nil}},
			events: []string{"unhandled _vendor/note"},
		},
		{
			name:  "SDK10 bad params is -32602 with the path",
			steps: []scriptStep{{v + `"id":3,"method":"bad_params","params":{}}`, []string{v + `"id":3,"error":{"code":-32602,"message":"invalid params","data":{"path":"/sessionId"}}}`}}},
		},
		{
			name:   "SDK10 response with unknown id dropped and reported",
			steps:  []scriptStep{{v + `"id":99,"result":{}}`, nil}, {v + `"id":"x","error":{"code":1,"message":"m"}}`, nil}},
			events: []string{"unmatched 99", `unmatched "x"`},
		},
		{
			name:   "SDK10 malformed response reported, never answered",
			steps:  []scriptStep{{v + `"result":{}}`, nil}},
			events: []string{"invalid response has no id"},
		},
		{
			name:  "handler error is -32603",
			steps: []scriptStep{{v + `"id":5,"method":"fail"}`, []string{v + `"id":5,"error":{"code":-32603,"message":"unexpected EOF"}}`}}},
		},
		{
			name:  "handler panic is -32603 and the connection survives",
			steps: []scriptStep{{v + `"id":6,"method":"panic"}`, []string{v + `"id":6,"error":{"code":-32603,"message":"handler panicked: handler bug"}}`}}},
		},
		{
			name:   "notification failure is reported, not answered",
			steps:  []scriptStep{{v + `"method":"fail"}`, nil}},
			events: []string{"failed fail: unexpected EOF"},
		},
		{
			name:  "blank lines and CRLF",
			steps: []scriptStep{{"  ", nil}, {v + `"id":7,"method":"ping"}` + "\r", []string{v + `"id":7,"result":"pong"}`}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			_, p := newRawPeer(t, echoHandler, &Options{Observer: rec.observer()})
			for _, s := range tt.steps {
				p.send(s.send)
				for _, w := range s.want {
					require.Equal(t, w, p.recv(), "answer to %s", s.send)
				}
			}
			p.sync(`"sync"`)
			require.Equal(t, tt.events, rec.list())
		})
	}
}

// TestSDK9_OversizeLineSkippedConnectionContinues pins that a line over the
// bound is reported and skipped, and the next message is served.
func TestSDK9_OversizeLineSkippedConnectionContinues(t *testing.T) {
	var rec recorder
	_, p := newRawPeer(t, echoHandler, &Options{MaxLineBytes: 64, Observer: rec.observer()})
	big := `{"jsonrpc":"2.0","id":1,"method":"echo","params":"` + strings.Repeat("x", 100) + `"}`
	p.send(big)
	p.sync("2")
	require.Equal(t, []string{"oversize " + itoa(int64(len(big)))}, rec.list())
}

// TestSP8_OutgoingIDsFromOne checks our request ids are integers from 1 and
// that answers reach the right caller.
func TestSP8_OutgoingIDsFromOne(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	ctx := t.Context()
	for i, want := range []string{"1", "2", "3"} {
		pc, err := c.Go(ctx, "m", map[string]int{"n": i})
		require.NoError(t, err)
		m := p.recvMsg()
		require.Equal(t, want, string(m["id"]))
		require.Equal(t, `"m"`, string(m["method"]))
		require.Equal(t, `"2.0"`, string(m["jsonrpc"]))
		p.send(`{"jsonrpc":"2.0","id":` + want + `,"result":{"n":` + want + `}}`)
		var got struct{ N int }
		require.NoError(t, pc.Result(&got))
		require.Equal(t, i+1, got.N)
	}
}

func TestCallErrorAnswerIsTypedError(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(t.Context(), "m", nil, nil) }()
	m := p.recvMsg()
	p.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"error":{"code":500,"message":"upstream","data":{"k":[1]}}}`)
	err := <-errc
	e, ok := errors.AsType[*Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, int64(500), e.Code)
	require.Equal(t, "upstream", e.Message)
	require.JSONEq(t, `{"k":[1]}`, string(e.Data))
}

func TestCallResultDecodeError(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	errc := make(chan error, 1)
	go func() {
		var n int
		errc <- c.Call(t.Context(), "m", nil, &n)
	}()
	m := p.recvMsg()
	p.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":"not a number"}`)
	err := <-errc
	require.ErrorContains(t, err, "decoding m result")
	_, isWire := errors.AsType[*Error](err)
	require.False(t, isWire)
}

func TestRawResultAndWriteRaw(t *testing.T) {
	var taps recorder
	c, p := newRawPeer(t, nil, &Options{Tap: func(d Direction, line []byte) { taps.add(d.String() + " " + string(line)) }})
	require.NoError(t, c.WriteRaw(t.Context(), []byte("not json at all")))
	require.Equal(t, "not json at all", p.recv())
	errc := make(chan error, 1)
	var raw json.RawMessage
	go func() { errc <- c.Call(t.Context(), "m", json.RawMessage(`[1]`), &raw) }()
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`, p.recv())
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"x" : 1}}`)
	require.NoError(t, <-errc)
	require.Equal(t, `{"x" : 1}`, string(raw))
	require.Equal(t, []string{
		"out not json at all",
		`out {"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`,
		`in {"jsonrpc":"2.0","id":1,"result":{"x" : 1}}`,
	}, taps.list())
}

func TestNullIDIsNotificationOption(t *testing.T) {
	handled := make(chan string, 1)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "ping" {
			return "pong", nil
		}
		handled <- req.Method
		return nil, nil
	})
	_, p := newRawPeer(t, h, &Options{NullIDIsNotification: true})
	p.send(`{"jsonrpc":"2.0","id":null,"method":"note"}`)
	p.sync("1") // nothing was written for the null-id message
	require.Equal(t, "note", <-handled)
}

// TestSDK10_NullIDNotificationMethodIsNeverAnswered (issue #23, the
// adapter's EV-12 and PM-10): a method the schema makes a notification
// (session/update) carrying "id": null is the notification it is: handled
// as one and never answered, also when the connection refuses its params
// itself (it was answered -32602 or -32700 with "id": null, and reached an
// OrderedFunc as a request). A request method with "id": null is still a
// request, answered with "id": null.
func TestSDK10_NullIDNotificationMethodIsNeverAnswered(t *testing.T) {
	update := func(params string) string {
		return `{"jsonrpc":"2.0","id":null,"method":"session/update","params":` + params + `}`
	}
	var rec recorder
	handled := make(chan string, 4)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "ping" {
			return "pong", nil
		}
		handled <- req.Method + " " + string(req.ID)
		return "answer", nil
	})
	_, p := newRawPeer(t, h, &Options{Observer: rec.observer()})
	p.send(update(`{"sessionId":"s"}`))
	p.send(update(`{"_meta":` + nested(jsonx.MaxDepth+1) + `}`))
	p.send(update(`{"sessionId":"` + "\xff" + `"}`))
	p.send(`{"jsonrpc":"2.0","id":null,"method":"session/request_permission","params":{}}`)
	require.Equal(t, `{"jsonrpc":"2.0","id":null,"result":"answer"}`, p.recv(), "only the request is answered")
	p.sync("1")
	require.Equal(t, "session/update ", <-handled, "handled as a notification")
	require.Equal(t, "session/request_permission null", <-handled)
	events := rec.list()
	require.Len(t, events, 2)
	require.Contains(t, events[0], "failed session/update")
	require.Contains(t, events[1], "failed session/update")

	seq := newSequence()
	_, op := newOrderedPeer(t, seq.add, nil)
	op.send(update(`{"sessionId":"s"}`))
	op.closeInput()
	await(t, seq.end)
	got, replies := seq.list()
	require.Equal(t, []string{`notification session/update {"sessionId":"s"}`, "end read"}, got)
	require.Empty(t, replies)
}

// TestEOFEndsConn checks a stream end fails pending calls, closes Done and
// reports the cause.
func TestEOFEndsConn(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	pc, err := c.Go(t.Context(), "m", nil)
	require.NoError(t, err)
	p.recv()
	p.closeInput()
	<-c.Done()
	require.ErrorIs(t, c.Err(), ErrClosed)
	require.ErrorIs(t, c.Err(), io.EOF)
	err = pc.Result(nil)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, io.EOF)
	// New calls fail at once.
	_, err = c.Go(t.Context(), "m", nil)
	require.ErrorIs(t, err, ErrClosed)
}

// TestCloseFailsPendingCalls checks Close fails calls, unblocks everything
// and leaves no goroutine (goleak in TestMain).
func TestCloseFailsPendingCalls(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(t.Context(), "m", nil, nil) }()
	p.recv()
	require.Nil(t, c.Err())
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-errc, ErrClosed)
	<-c.Done()
	require.ErrorIs(t, c.Err(), ErrClosed)
	require.ErrorIs(t, c.Notify(t.Context(), "n", nil), ErrClosed)
	require.ErrorIs(t, c.Flush(t.Context()), ErrClosed)
	require.NoError(t, c.Close(), "Close is idempotent")
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestWriteFailureFailsCallKeepsReading pins TU-9's need: a failed write
// fails the call with ErrWriteFailed but the reader keeps running.
func TestWriteFailureFailsCallKeepsReading(t *testing.T) {
	connIn, peerOut := io.Pipe()
	c := NewConn(connIn, errWriter{}, nil, nil)
	defer func() {
		require.NoError(t, c.Close())
	}()
	err := c.Call(t.Context(), "m", nil, nil)
	require.ErrorIs(t, err, ErrWriteFailed)
	require.ErrorContains(t, err, "broken pipe")
	require.ErrorIs(t, c.Notify(t.Context(), "n", nil), ErrWriteFailed)
	select {
	case <-c.Done():
		t.Fatal("a write failure must not end the connection")
	default:
	}
	require.NoError(t, peerOut.Close())
	<-c.Done()
	require.ErrorIs(t, c.Err(), io.EOF)
}

func TestNotifyAndCallHonourContext(t *testing.T) {
	c, _ := newRawPeer(t, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, c.Notify(ctx, "n", nil), context.Canceled)
	require.ErrorIs(t, c.Call(ctx, "m", nil, nil), context.Canceled)
	require.ErrorIs(t, c.Flush(ctx), context.Canceled)
	// An unencodable params value is an error, not a panic or a bad line.
	require.Error(t, c.Notify(t.Context(), "n", func() {}))
}

// A response carrying both result and error fails the call with the error
// rather than leaving it waiting.
func TestResponseWithResultAndErrorFailsCall(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	pc, err := c.Go(t.Context(), "m", nil)
	require.NoError(t, err)
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32002,"message":"gone"}}`)
	require.ErrorIs(t, pc.Result(nil), ErrResourceNotFound)
	pc2, err := c.Go(t.Context(), "m", nil)
	require.NoError(t, err)
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":2,"error":"not an object"}`)
	require.ErrorIs(t, pc2.Result(nil), ErrMalformedResponse)
}
