package acpsdk

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sender whose ctx cannot end may write its frame itself; frames queued
// before it must still reach the peer first.
func TestSP8_DirectWritesKeepSendOrder(t *testing.T) {
	c, p := newRawPeer(t, nil, nil)
	bg := context.Background()
	require.NoError(t, c.Notify(t.Context(), "a", nil)) // queued
	require.NoError(t, c.Notify(bg, "b", nil))          // direct once "a" is out
	pc, err := c.Go(bg, "c", nil)
	require.NoError(t, err)
	for _, want := range []string{`"method":"a"`, `"method":"b"`, `"method":"c"`} {
		require.Contains(t, p.recv(), want)
	}
	require.Equal(t, int64(1), pc.ID())
}

// errCloser fails every write and can be closed.
type errCloser struct{ errWriter }

func (errCloser) Close() error { return nil }

func TestDirectWriteFailureFailsCall(t *testing.T) {
	connIn, peerOut := io.Pipe()
	c := NewConn(connIn, errCloser{}, nil, nil)
	err := c.Call(context.Background(), "m", nil, nil)
	require.ErrorIs(t, err, ErrWriteFailed)
	require.ErrorContains(t, err, "broken pipe")
	require.ErrorIs(t, c.Notify(context.Background(), "n", nil), ErrWriteFailed)
	require.ErrorIs(t, c.Notify(t.Context(), "n", nil), ErrWriteFailed)
	require.NoError(t, peerOut.Close())
	require.NoError(t, c.Close())
}

// A direct write blocked on a peer that never reads is ended by Close, as
// a queued one is.
func TestCloseEndsDirectWriteToStalledPeer(t *testing.T) {
	connIn, peerOut := io.Pipe()
	stalled, connOut := io.Pipe() // nobody reads stalled
	c := NewConn(connIn, connOut, nil, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "m", nil, nil) }()
	// Wait until the call is blocked inside its write, holding wmu.
	for c.wmu.TryLock() {
		c.wmu.Unlock()
		runtime.Gosched()
	}
	require.NoError(t, c.Close())
	err := <-errc
	require.True(t, errors.Is(err, ErrClosed), "got %v", err)
	require.NoError(t, peerOut.Close())
	require.NoError(t, stalled.Close())
	require.False(t, strings.Contains(err.Error(), "write"), "a Close is not a write failure: %v", err)
}
