package acpsdk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// In-package micro benchmarks of the hot paths; tools/bench holds the
// side-by-side comparisons.

// BenchmarkCallRoundTrip: one request and its answer between two Conns
// over OS pipes.
func BenchmarkCallRoundTrip(b *testing.B) {
	aR, aW, err := os.Pipe()
	require.NoError(b, err)
	bR, bW, err := os.Pipe()
	require.NoError(b, err)
	server := NewConn(aR, bW, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}), nil)
	defer server.Close()
	client := NewConn(bR, aW, nil, nil)
	defer client.Close()
	params := json.RawMessage(`{"sessionId":"s1"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var res json.RawMessage
		if err := client.Call(ctx, "m", params, &res); err != nil {
			b.Fatal(err)
		}
	}
}

const benchUpdate = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello there, this is a streamed chunk of an agent's reply."}}}}`

// repeatReader yields the same line forever without allocating.
type repeatReader struct {
	line []byte
	off  int
	left int // lines still to send
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:], r.line[r.off:])
		r.off += c
		n += c
		if r.off == len(r.line) {
			r.off = 0
			r.left--
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// BenchmarkNotificationRaw: framing, classification and ordered dispatch of
// one session/update to a raw handler.
func BenchmarkNotificationRaw(b *testing.B) {
	var seen atomic.Int64
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		seen.Add(1)
		return nil, nil
	})
	line := []byte(benchUpdate + "\n")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	c := NewConn(&repeatReader{line: line, left: b.N}, io.Discard, h, nil)
	<-c.Done()
	require.NoError(b, c.Close())
	require.EqualValues(b, b.N, seen.Load())
}

// BenchmarkNotificationTyped: the same, decoded to gen.SessionNotification
// and handed to a gen.Client.
func BenchmarkNotificationTyped(b *testing.B) {
	fc := &countingClient{}
	line := []byte(benchUpdate + "\n")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	c := NewClientSide(&repeatReader{line: line, left: b.N}, io.Discard, fc, nil)
	<-c.Done()
	require.NoError(b, c.Close())
	require.EqualValues(b, b.N, fc.n.Load())
}

type countingClient struct{ n atomic.Int64 }

func (c *countingClient) SessionUpdate(ctx context.Context, p *gen.SessionNotification) error {
	c.n.Add(1)
	return nil
}

func (c *countingClient) RequestPermission(ctx context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return nil, ErrMethodNotFound
}

// heapSampler makes the reader outrun it: it forces a GC and samples the
// heap every few messages, which is much slower than reading a line.
type heapSampler struct {
	n       int
	maxHeap uint64
}

func (s *heapSampler) Handle(ctx context.Context, req *Request) (any, error) {
	s.n++
	if s.n%2 == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.maxHeap = max(s.maxHeap, ms.HeapAlloc)
	}
	return nil, nil
}

// TestSDK9_FloodIntoSlowHandlerKeepsHeapSmall pushes a flood of large
// notifications into a handler far slower than the reader and checks the
// live heap stays bounded (the queue holds at most MaxQueuedBytes, here
// 4 MiB). tools/bench runs the full 1 GiB flood.
func TestSDK9_FloodIntoSlowHandlerKeepsHeapSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("flood test skipped in -short mode")
	}
	payload := strings.Repeat("x", 256<<10)
	line := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","text":%q}}`+"\n", payload))
	const total = 64 << 20 // bytes of flood; unbounded, the queue alone would hold all of it
	n := total / len(line)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	s := &heapSampler{}
	c := NewConn(&repeatReader{line: line, left: n}, io.Discard, s, &Options{MaxQueuedBytes: 4 << 20})
	<-c.Done()
	require.NoError(t, c.Close())
	require.Equal(t, n, s.n, "every notification handled")
	grown := int64(s.maxHeap) - int64(before.HeapAlloc)
	t.Logf("flood %d MiB in %d lines: live heap grew at most %.1f MiB", total>>20, n, float64(grown)/(1<<20))
	require.Less(t, grown, int64(16<<20), "live heap must stay bounded by the queue's byte bound")
}

func TestRepeatReader(t *testing.T) {
	var buf bytes.Buffer
	_, err := io.Copy(&buf, &repeatReader{line: []byte("ab\n"), left: 3})
	require.NoError(t, err)
	require.Equal(t, "ab\nab\nab\n", buf.String())
}
