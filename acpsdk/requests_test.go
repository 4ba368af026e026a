package acpsdk

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSDK8_CancelReachesDerivedContexts: a request's context carries its
// scope without a WithValue layer of its own, so a context a handler
// derives from it must still be cancelled by $/cancel_request and still
// find the values above it.
func TestSDK8_CancelReachesDerivedContexts(t *testing.T) {
	type key struct{}
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		derived, stop := context.WithTimeout(context.WithValue(ctx, key{}, "mine"), failsafe)
		defer stop()
		close(started)
		<-derived.Done()
		if derived.Value(key{}) != "mine" {
			return nil, &Error{Code: CodeInternalError, Message: "value lost"}
		}
		return nil, derived.Err()
	})
	_, p := newRawPeer(t, h, nil)
	p.send(`{"jsonrpc":"2.0","id":"r1","method":"slow"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r1"}}`)
	require.Equal(t, `{"jsonrpc":"2.0","id":"r1","error":{"code":-32800,"message":"request cancelled"}}`, p.recv())
}

// TestSDK7_RequestsOneAfterAnotherAreEachServed: requests answered one at
// a time are served by a reused request goroutine, often started by the
// reader itself; each gets its own Request, context and answer.
func TestSDK7_RequestsOneAfterAnotherAreEachServed(t *testing.T) {
	var kept []*Request
	var ctxs []context.Context
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		kept = append(kept, req) // one at a time: the peer waits for each answer
		ctxs = append(ctxs, ctx)
		return req.Params, nil
	})
	_, p := newRawPeer(t, h, nil)
	for i := range 20 {
		id := strings.Repeat("7", i+1)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"m","params":[` + id + `]}`)
		require.Equal(t, `{"jsonrpc":"2.0","id":`+id+`,"result":[`+id+`]}`, p.recv())
	}
	for i, req := range kept {
		require.Equal(t, "["+strings.Repeat("7", i+1)+"]", string(req.Params), "request %d kept its own params", i)
		require.Error(t, ctxs[i].Err(), "request %d's context ends once it is answered", i)
	}
}

// TestRawHandlerMayKeepNotificationRequest: only a side's own typed
// dispatch, which never keeps it, gets the connection's reused
// notification Request; a raw Handler may keep each one.
func TestRawHandlerMayKeepNotificationRequest(t *testing.T) {
	var kept []*Request
	done := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		kept = append(kept, req)
		if len(kept) == 3 {
			close(done)
		}
		return nil, nil
	})
	_, p := newRawPeer(t, h, nil)
	for i := range 3 {
		p.send(note(i))
	}
	<-done
	for i, req := range kept {
		require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), string(req.Params), "notification %d kept its own params", i)
	}
}

// TestLinesKeptIndependently: lines share blocks, but each is the caller's
// alone: appending to one cannot overwrite the next, and a long line gets
// its own allocation.
func TestLinesKeptIndependently(t *testing.T) {
	long := strings.Repeat("x", lineSlabSize/2)
	in := "first\nsecond\n" + long + "\nthird\n"
	lr := newLineReader(strings.NewReader(in), DefaultMaxLineBytes)
	var lines [][]byte
	for range 4 {
		line, err := lr.next()
		require.NoError(t, err)
		lines = append(lines, line)
	}
	require.Equal(t, len(lines[0]), cap(lines[0]), "a kept line's capacity ends with it")
	_ = append(lines[0], "XXXXXX"...)
	require.Equal(t, "second", string(lines[1]))
	require.Equal(t, long, string(lines[2]))
	require.True(t, bytes.Equal([]byte("third"), lines[3]))
}
