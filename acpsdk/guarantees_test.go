package acpsdk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// Each test here pins one guarantee of the connection and fails when it is
// removed. They run in synctest bubbles: synctest.Wait proves every
// goroutine is blocked (so "not yet delivered" is a fact, not a race), and a
// deadlock makes the failsafe timer fire at once in fake time.

// countReads is an Options.Tap that counts the lines read into n.
func countReads(n *atomic.Int32) func(Direction, []byte) {
	return func(d Direction, _ []byte) {
		if d == DirectionIn {
			n.Add(1)
		}
	}
}

func note(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d}}`, i)
}

// TestSDK7_ResponseAfterPrecedingNotifications: a response is delivered only
// after every notification read before it was handled.
func TestSDK7_ResponseAfterPrecedingNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var handled atomic.Int32
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			<-gate
			handled.Add(1)
			return nil, nil
		})
		c, p := newRawPeer(t, h, nil)
		pc, err := c.Go(t.Context(), "session/prompt", nil)
		require.NoError(t, err)
		p.recv()
		for i := range 5 {
			p.send(note(i))
		}
		p.send(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)
		// The reader answers garbage itself, so this answer proves it has
		// already processed the response line.
		p.send(`garbage`)
		require.Contains(t, p.recv(), `"code":-32700`)
		for i := range 5 {
			synctest.Wait()
			select {
			case <-pc.Done():
				t.Fatalf("response delivered with %d of 5 preceding notifications handled", i)
			default:
			}
			gate <- struct{}{}
		}
		<-pc.Done()
		require.EqualValues(t, 5, handled.Load())
		var res struct{ StopReason string }
		require.NoError(t, pc.Result(&res))
		require.Equal(t, "end_turn", res.StopReason)
	})
}

// TestSDK7_RequestAfterPrecedingNotifications: a request reaches its handler
// only after the notifications before it were handled, and notifications
// are handled in arrival order.
func TestSDK7_RequestAfterPrecedingNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			mu.Lock()
			order = append(order, req.Method+string(req.Params))
			mu.Unlock()
			return "ok", nil
		})
		_, p := newRawPeer(t, h, nil)
		var want []string
		for i := range 20 {
			p.send(note(i))
			want = append(want, fmt.Sprintf(`note{"i":%d}`, i))
		}
		p.send(`{"jsonrpc":"2.0","id":1,"method":"req"}`)
		want = append(want, "req")
		require.Equal(t, `{"jsonrpc":"2.0","id":1,"result":"ok"}`, p.recv())
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, want, order)
	})
}

// TestSDK7_NotificationHandlerCallsPeerWhileQueueFull: a notification
// handler makes a call and waits for its answer while the peer floods more
// notifications than the queue holds before answering. Without the lifted
// bound the reader would block before reaching the answer; without the
// in-handler exemption the answer would wait for notifications queued
// behind the handler. Either is a deadlock.
func TestSDK7_NotificationHandlerCallsPeerWhileQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Conn
		got := make(chan string, 64)
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if string(req.Params) == `{"i":0}` {
				var answer string
				if err := c.Call(ctx, "ask", nil, &answer); err != nil {
					return nil, err
				}
				got <- "answer " + answer
				// Notifying from a handler needs no answer and must not block either.
				return nil, c.Notify(ctx, "told", nil)
			}
			got <- string(req.Params)
			return nil, nil
		})
		c, p := newRawPeer(t, h, &Options{MaxQueuedMessages: 2})
		p.send(note(0))
		m := p.recvMsg()
		require.Equal(t, `"ask"`, string(m["method"]))
		for i := 1; i <= 10; i++ {
			p.sendAsync(note(i))
		}
		p.sendAsync(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":"yes"}`)
		require.Equal(t, "answer yes", await(t, got))
		require.Equal(t, `{"jsonrpc":"2.0","method":"told"}`, p.recv())
		for i := 1; i <= 10; i++ {
			require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), await(t, got))
		}
	})
}

// TestSDK7_RequestHandlersCallPeerWhileQueueFull: request handlers that all
// wait on calls to the peer hold the whole bound; the bound is lifted so the
// reader reaches the answers.
func TestSDK7_RequestHandlersCallPeerWhileQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Conn
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			var answer json.RawMessage
			err := c.Call(ctx, "ask", req.Params, &answer)
			return answer, err
		})
		c, p := newRawPeer(t, h, &Options{MaxQueuedMessages: 2})
		const n = 6
		for i := range n {
			p.sendAsync(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"req","params":{"i":%d}}`, 100+i, i))
		}
		// Answer each "ask" as it comes; then collect the n answers.
		answers := map[string]bool{}
		for len(answers) < n {
			m := p.recvMsg()
			if string(m["method"]) == `"ask"` {
				p.sendAsync(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"a":%s}}`, m["id"], m["params"]))
				continue
			}
			answers[string(m["id"])+" "+string(m["result"])] = true
		}
		for i := range n {
			require.True(t, answers[fmt.Sprintf(`%d {"a":{"i":%d}}`, 100+i, i)], "%v", answers)
		}
	})
}

// TestSDK9_SlowHandlerSlowsReader: with a stuck handler the reader stops
// after filling the bound (no unbounded queue), drops nothing, and the
// connection carries on once the handler moves.
func TestSDK9_SlowHandlerSlowsReader(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantReads int32
	}{
		// 1 running + 3 queued admitted, the 5th line waits in the reader.
		{"message bound", Options{MaxQueuedMessages: 4}, 5},
		// Each note line is 51 bytes: 3 fit in 160 bytes, the 4th waits.
		{"byte bound", Options{MaxQueuedBytes: 160}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				require.Len(t, note(10), 51)
				gate := make(chan struct{})
				var handled, reads atomic.Int32
				h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					if req.Method == "ping" {
						return "pong", nil
					}
					<-gate
					handled.Add(1)
					return nil, nil
				})
				opts := tt.opts
				opts.Tap = countReads(&reads)
				c, p := newRawPeer(t, h, &opts)
				for i := range 100 {
					p.sendAsync(note(10 + i))
				}
				synctest.Wait()
				require.Equal(t, tt.wantReads, reads.Load(), "lines read while the handler is stuck")
				close(gate)
				p.sync("1")
				require.EqualValues(t, 100, handled.Load(), "every notification handled, none dropped")
				require.Nil(t, c.Err())
			})
		})
	}
}

// TestSDK9_BacklogBoundHoldsTheReader: the bytes queued for the dispatcher
// have a bound of their own (Options.MaxBacklogBytes); the message being
// handled holds none of it.
func TestSDK9_BacklogBoundHoldsTheReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var handled, reads atomic.Int32
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "ping" {
				return "pong", nil
			}
			<-gate
			handled.Add(1)
			return nil, nil
		})
		opts := Options{MaxBacklogBytes: 3 * len(note(10)), Tap: countReads(&reads)}
		c, p := newRawPeer(t, h, &opts)
		p.send(note(10))
		synctest.Wait() // the first notification is being handled
		for i := 1; i < 100; i++ {
			p.sendAsync(note(10 + i))
		}
		synctest.Wait()
		// 1 being handled + 3 queued; the 5th line waits in the reader.
		require.EqualValues(t, 5, reads.Load(), "lines read while the handler is stuck")
		close(gate)
		p.sync("1")
		require.EqualValues(t, 99+1, handled.Load(), "every notification handled, none dropped")
		require.Nil(t, c.Err())
	})
}

// TestSDK9_RequestsBeingHandledHoldNoBacklog: requests queued behind a
// stuck notification handler fill the backlog; once the dispatcher has
// handed them to their handlers, which are still running, the reader reads
// on (it is woken when they leave the queue, not when they are answered).
func TestSDK9_RequestsBeingHandledHoldNoBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		noteGate, reqGate := make(chan struct{}), make(chan struct{})
		var reads atomic.Int32
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "ping":
				return "pong", nil
			case "note":
				<-noteGate
				return nil, nil
			}
			<-reqGate
			return "done", nil
		})
		request := func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"req","params":{"i":%d}}`, 100+i, i)
		}
		require.Len(t, request(10), len(request(19)))
		opts := Options{MaxBacklogBytes: 3 * len(request(10)), Tap: countReads(&reads)}
		c, p := newRawPeer(t, h, &opts)
		p.send(note(0))
		synctest.Wait() // the notification handler is stuck
		for i := 10; i < 20; i++ {
			p.sendAsync(request(i))
		}
		synctest.Wait()
		require.EqualValues(t, 1+3+1, reads.Load(), "1 handled, 3 queued, the 5th line waits in the reader")
		close(noteGate)
		// Every request is now with its handler, none answered: the
		// reader must have read on to the ping.
		p.sync("1")
		require.EqualValues(t, 1+10+1, reads.Load())
		close(reqGate)
		answers := map[string]bool{}
		for range 10 {
			m := p.recvMsg()
			answers[string(m["id"])+" "+string(m["result"])] = true
		}
		for i := 10; i < 20; i++ {
			require.True(t, answers[fmt.Sprintf(`%d "done"`, 100+i)], "%v", answers)
		}
		require.Nil(t, c.Err())
	})
}

// TestSDK9_MessageOverTheBacklogBoundIsAdmitted: a message larger than the
// backlog's bound is queued once nothing else is, even while a request is
// being handled; none is dropped.
func TestSDK9_MessageOverTheBacklogBoundIsAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var handled atomic.Int32
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "ping":
				return "pong", nil
			case "slow":
				<-gate
				return "done", nil
			}
			handled.Add(1)
			return nil, nil
		})
		c, p := newRawPeer(t, h, &Options{MaxBacklogBytes: 8})
		p.send(`{"jsonrpc":"2.0","id":7,"method":"slow"}`)
		synctest.Wait() // a request is being handled: the queue is not empty of work
		for i := range 20 {
			p.sendAsync(note(i))
		}
		p.sync("1")
		require.EqualValues(t, 20, handled.Load())
		close(gate)
		require.Equal(t, `{"jsonrpc":"2.0","id":7,"result":"done"}`, p.recv())
		require.Nil(t, c.Err())
	})
}

// TestSDK8_CallContextEndSendsCancelRequest: the call sends $/cancel_request
// and returns ctx's error; the peer's late answer is dropped quietly.
func TestSDK8_CallContextEndSendsCancelRequest(t *testing.T) {
	var rec recorder
	c, p := newRawPeer(t, echoHandler, &Options{Observer: rec.observer()})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "session/prompt", nil, nil) }()
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`, p.recv())
	cancel()
	require.Equal(t, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`, p.recv())
	require.ErrorIs(t, <-errc, context.Canceled)
	p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled"}}`)
	p.send(`{"jsonrpc":"2.0","id":77,"result":null}`)
	p.sync("1")
	require.Equal(t, []string{"unmatched 77"}, rec.list())
}

// TestSDK8_PendingCallCancelKeepsWaiting: Go + Cancel sends one
// $/cancel_request however often called, and Result gets the final answer.
func TestSDK8_PendingCallCancelKeepsWaiting(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	pc, err := c.Go(t.Context(), "session/prompt", nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, pc.ID())
	p.recv()
	pc.Cancel()
	pc.Cancel()
	require.Equal(t, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`, p.recv())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, pc.Wait(ctx, nil), context.Canceled, "Wait is bounded by its ctx")
	p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled"}}`)
	require.ErrorIs(t, pc.Result(nil), ErrRequestCancelled)
	// Nothing else (no second cancel) was written.
	require.NoError(t, c.Notify(t.Context(), "marker", nil))
	require.Equal(t, `{"jsonrpc":"2.0","method":"marker"}`, p.recv())
}

// TestSDK8_InboundCancelRequest: $/cancel_request cancels the handler's ctx
// and the request is still answered, with -32800.
func TestSDK8_InboundCancelRequest(t *testing.T) {
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, p := newRawPeer(t, h, nil)
	p.send(`{"jsonrpc":"2.0","id":"r1","method":"slow"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r1"}}`)
	require.Equal(t, `{"jsonrpc":"2.0","id":"r1","error":{"code":-32800,"message":"request cancelled"}}`, p.recv())
}

// TestSDK8_InboundCancelBeforeHandlerStarts: a cancel for a request still
// queued (behind a slow notification) is not lost.
func TestSDK8_InboundCancelBeforeHandlerStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "note" {
				<-gate
				return nil, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return "ran", nil
		})
		_, p := newRawPeer(t, h, nil)
		p.send(note(1))
		p.send(`{"jsonrpc":"2.0","id":5,"method":"work"}`)
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}`)
		synctest.Wait()
		close(gate)
		require.Equal(t, `{"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"request cancelled"}}`, p.recv())
	})
}

// gatedWriter holds every write until released.
type gatedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

// TestSP8_FlushWaitsForQueuedWrites: Flush returns only once everything
// queued before it reached the writer.
func TestSP8_FlushWaitsForQueuedWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut := io.Pipe()
		w := &gatedWriter{release: make(chan struct{})}
		c := NewConn(connIn, w, nil, nil)
		for i := range 3 {
			require.NoError(t, c.Notify(t.Context(), "n", map[string]int{"i": i}))
		}
		flushed := make(chan error, 1)
		go func() { flushed <- c.Flush(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-flushed:
			t.Fatalf("Flush returned %v before the writes happened", err)
		default:
		}
		close(w.release)
		require.NoError(t, <-flushed)
		w.mu.Lock()
		require.Equal(t, 3, strings.Count(w.buf.String(), "\n"))
		w.mu.Unlock()
		require.NoError(t, c.Close())
		require.NoError(t, peerOut.Close())
	})
}

// TestFlushBoundedByContext: a writer that never returns cannot hold Flush
// past its ctx, and Close still ends everything.
func TestFlushBoundedByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut := io.Pipe()
		blockR, blockW := io.Pipe() // writes block: nobody reads blockR
		c := NewConn(connIn, blockW, nil, nil)
		require.NoError(t, c.Notify(t.Context(), "n", nil))
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			synctest.Wait()
			cancel()
		}()
		require.ErrorIs(t, c.Flush(ctx), context.Canceled)
		require.NoError(t, c.Close())
		require.NoError(t, peerOut.Close())
		require.NoError(t, blockR.Close())
	})
}

// TestHandlerRespectsCloseCancellation: Close cancels a running request
// handler's ctx and waits for it.
func TestHandlerRespectsCloseCancellation(t *testing.T) {
	started := make(chan struct{})
	returned := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		close(returned)
		return nil, ctx.Err()
	})
	c, p := newRawPeer(t, h, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
	<-started
	require.NoError(t, c.Close())
	select {
	case <-returned:
	default:
		t.Fatal("Close returned before the handler did")
	}
}

// TestDeferredAnswerDeliveredAtEOF: an answer read just before the stream
// ended is still delivered after the notifications before it.
func TestDeferredAnswerDeliveredAtEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			<-gate
			return nil, nil
		})
		c, p := newRawPeer(t, h, nil)
		pc, err := c.Go(t.Context(), "m", nil)
		require.NoError(t, err)
		p.recv()
		p.send(note(1))
		p.send(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		p.closeInput()
		synctest.Wait()
		close(gate)
		var res json.RawMessage
		require.NoError(t, pc.Result(&res))
		require.Equal(t, `{"ok":true}`, string(res))
		<-c.Done()
		require.ErrorIs(t, c.Err(), io.EOF)
	})
}

// TestSDK9_NotifyHonoursContextWhenWriterIsStuck: with the writer blocked
// and its queue full, a send waits for space under its ctx and gives up
// when ctx ends.
func TestSDK9_NotifyHonoursContextWhenWriterIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut := io.Pipe()
		w := &gatedWriter{release: make(chan struct{})}
		c := NewConn(connIn, w, nil, &Options{WriteQueue: 1})
		require.NoError(t, c.Notify(t.Context(), "a", nil)) // taken by the writer, stuck in Write
		synctest.Wait()
		require.NoError(t, c.Notify(t.Context(), "b", nil)) // fills the queue
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- c.Notify(ctx, "c", nil) }()
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("Notify returned %v with the queue full", err)
		default:
		}
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		close(w.release)
		require.NoError(t, c.Flush(t.Context()))
		w.mu.Lock()
		require.Equal(t, `{"jsonrpc":"2.0","method":"a"}`+"\n"+`{"jsonrpc":"2.0","method":"b"}`+"\n", w.buf.String())
		w.mu.Unlock()
		require.NoError(t, c.Close())
		require.NoError(t, peerOut.Close())
	})
}

// TestSDK7_StreamEndAfterPrecedingNotifications: a call learns that the
// stream ended only after the notifications read before the end were
// handled, like an answer would.
func TestSDK7_StreamEndAfterPrecedingNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var handled atomic.Int32
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			<-gate
			handled.Add(1)
			return nil, nil
		})
		c, p := newRawPeer(t, h, nil)
		pc, err := c.Go(t.Context(), "session/prompt", nil)
		require.NoError(t, err)
		p.recv()
		p.send(note(1))
		p.send(note(2))
		p.closeInput()
		synctest.Wait()
		select {
		case <-pc.Done():
			t.Fatal("the call failed before the notifications before the stream end were handled")
		default:
		}
		// New calls fail at once.
		_, err = c.Go(t.Context(), "m", nil)
		require.ErrorIs(t, err, ErrClosed)
		close(gate)
		require.ErrorIs(t, pc.Result(nil), io.EOF)
		require.EqualValues(t, 2, handled.Load())
	})
}

// TestStreamEndFailsCallFromNotificationHandler: a call made from inside
// the running notification handler fails at the stream end at once, or the
// drain would wait on it forever.
func TestStreamEndFailsCallFromNotificationHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Conn
		got := make(chan error, 1)
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			err := c.Call(ctx, "ask", nil, nil)
			got <- err
			return nil, err
		})
		c, p := newRawPeer(t, h, nil)
		p.send(note(1))
		p.recv() // the "ask" request
		p.closeInput()
		require.ErrorIs(t, await(t, got), ErrClosed)
		<-c.Done()
	})
}
