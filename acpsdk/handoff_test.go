package acpsdk

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reader queues notifications without waking the dispatcher and wakes
// it once before it waits for anything (inbox.flush). These tests pin that
// no wait of the reader's leaves a notification held: each would hang
// (and fail at the failsafe) if one did.

// chunkThenBlock is a stream whose first read returns chunk and whose
// next read waits until release is closed, then ends. With more, the
// reads before that return each of more in turn, each once its gate is
// closed: the test then knows the dispatcher has been at work (and most
// likely waits again) when the chunk arrives.
type chunkThenBlock struct {
	chunk   []byte
	more    [][]byte
	gates   []chan struct{}
	release chan struct{}
	sent    int
}

func (r *chunkThenBlock) Read(p []byte) (int, error) {
	switch {
	case r.sent == 0:
		r.sent++
		return copy(p, r.chunk), nil
	case r.sent <= len(r.more):
		<-r.gates[r.sent-1]
		r.sent++
		return copy(p, r.more[r.sent-2]), nil
	}
	<-r.release
	return 0, io.EOF
}

func notificationLines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"jsonrpc":"2.0","method":"note","params":{"n":` + strconv.Itoa(i) + "}}\n")
	}
	return b.String()
}

// TestSDK7_NotificationsInOneReadAreHandledBeforeTheNextRead pins that the
// notifications of one read are all handled, in order, while the reader
// waits in the next read.
func TestSDK7_NotificationsInOneReadAreHandledBeforeTheNextRead(t *testing.T) {
	for range 50 {
		const n = 40
		r := &chunkThenBlock{chunk: []byte(notificationLines(n)), release: make(chan struct{})}
		seen := make(chan string, n)
		c := NewConn(r, io.Discard, HandlerFunc(func(_ context.Context, req *Request) (any, error) {
			seen <- string(req.Params)
			return nil, nil
		}), nil)
		for i := range n {
			require.Equal(t, `{"n":`+strconv.Itoa(i)+`}`, await(t, seen))
		}
		close(r.release)
		<-c.Done()
		require.NoError(t, c.Close())
	}
}

// TestSDK7_HeldNotificationsReachTheHandlerBeforeAnObserverWaits pins that
// a notification queued behind the reader reaches its handler before the
// reader runs an Observer callback, which may wait on the handler.
func TestSDK7_HeldNotificationsReachTheHandlerBeforeAnObserverWaits(t *testing.T) {
	for range 50 {
		first, second := make(chan struct{}), make(chan struct{})
		r := &chunkThenBlock{
			chunk: []byte(`{"jsonrpc":"2.0","method":"first"}` + "\n"),
			more:  [][]byte{[]byte(`{"jsonrpc":"2.0","method":"second"}` + "\nnot json\n")},
			gates: []chan struct{}{first}, release: make(chan struct{}),
		}
		c := NewConn(r, io.Discard, HandlerFunc(func(_ context.Context, req *Request) (any, error) {
			if req.Method == "first" {
				close(first)
			} else {
				close(second)
			}
			return nil, nil
		}), &Options{Observer: Observer{UnparsableLine: func([]byte) {
			await(t, second) // hangs unless the notification was released first
		}}})
		await(t, second)
		close(r.release)
		<-c.Done()
		require.NoError(t, c.Close())
	}
}

// TestSDK7_HeldNotificationsReachTheHandlerBeforeATapWaits is the same for
// the wire tap.
func TestSDK7_HeldNotificationsReachTheHandlerBeforeATapWaits(t *testing.T) {
	for range 50 {
		first, second := make(chan struct{}), make(chan struct{})
		r := &chunkThenBlock{
			chunk: []byte(`{"jsonrpc":"2.0","method":"first"}` + "\n"),
			more:  [][]byte{[]byte(`{"jsonrpc":"2.0","method":"second"}` + "\n" + `{"jsonrpc":"2.0","method":"third"}` + "\n")},
			gates: []chan struct{}{first}, release: make(chan struct{}),
		}
		c := NewConn(r, io.Discard, HandlerFunc(func(_ context.Context, req *Request) (any, error) {
			switch req.Method {
			case "first":
				close(first)
			case "second":
				close(second)
			}
			return nil, nil
		}), &Options{Tap: func(_ Direction, line []byte) {
			if strings.Contains(string(line), "third") {
				await(t, second) // hangs unless "second" was released first
			}
		}})
		await(t, second)
		close(r.release)
		<-c.Done()
		require.NoError(t, c.Close())
	}
}
