package bench

import (
	"bytes"
	"io"
	"testing"

	"acpkit.dev/acpsdk"
	"github.com/stretchr/testify/require"
)

// TestSDK11_NotificationSidesDoTheSameWork guards the notification
// benchmark's fairness on a short stream: ours and coder's connection
// (through the window reader) hand every notification to the handler as a
// typed value with the same text.
func TestSDK11_NotificationSidesDoTheSameWork(t *testing.T) {
	const n = 3 * coderWindow // enough to make the window wait
	stream := chunkStream(n)
	var wantBytes int64
	for i := range n {
		wantBytes += int64(len(chunkTextN(i)))
	}

	ours := newChunkCounter(n)
	conn := acpsdk.NewClientSide(bytes.NewReader(stream), io.Discard, oursClient{ours}, nil)
	<-conn.Done()
	require.NoError(t, conn.Close())
	checkCount(t, ours)
	require.Equal(t, wantBytes, ours.bytes)

	coder := newChunkCounter(n)
	waitCoder(t, newCoderConn(coder, newWindowReader(stream, coder, coderWindow)), coder)
	checkCount(t, coder)
	require.Equal(t, wantBytes, coder.bytes)
}

// TestSDK9_FloodHoldsTheReaderBack runs a 4 MiB flood: every notification
// reaches the slow handler, and the reader never gets further ahead of it
// than the connection's queue allows.
func TestSDK9_FloodHoldsTheReaderBack(t *testing.T) {
	src := newFloodReader(4 << 20)
	h := newSlowClient(src)
	conn := acpsdk.NewClientSide(src, io.Discard, h, nil)
	<-conn.Done()
	require.NoError(t, conn.Close())
	checkCount(t, h.chunkCounter)
	require.Positive(t, h.heap.peak)
	require.Positive(t, h.heap.peakLive)
	// The backlog's bound, plus one message being handled and one waiting
	// in the reader, plus the read buffer.
	require.LessOrEqual(t, h.lag, int64(acpsdk.DefaultMaxBacklogBytes+2*src.per+acpsdkReadBuffer))
}

// acpsdkReadBuffer is the connection's read buffer (acpsdk's
// readBufferSize), which the reader may fill beyond the queue.
const acpsdkReadBuffer = 32 << 10
