package bench

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// floodBytes is the size of the flood issue #3 asks for.
const floodBytes = 1 << 30

// floodText makes each flood notification about 1 KiB, so 1 GiB is about a
// million notifications and a run takes seconds, not minutes. The
// connection's backlog bound (acpsdk.DefaultMaxBacklogBytes, 64 KiB: about
// 64 of them) fills as surely as with small ones.
var floodText = strings.Repeat("streamed agent output, chunk after chunk. ", 22)

// floodReader yields whole session/update lines, at least limit bytes of
// them, from one block it cycles through: a 1 GiB stream without 1 GiB of
// memory.
type floodReader struct {
	block  []byte // 64 copies of one line
	per    int    // bytes of one line
	off    int
	served atomic.Int64 // read by the handler to see how far ahead the reader is
	total  int64        // limit rounded up to a whole line
}

func newFloodReader(limit int64) *floodReader {
	line := notificationLine([]byte(`{"sessionId":"sess_7f3a9c2e41b8","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + floodText + `"}}}`))
	block := make([]byte, 0, 64*len(line))
	for range 64 {
		block = append(block, line...)
	}
	per := int64(len(line))
	return &floodReader{block: block, per: len(line), total: (limit + per - 1) / per * per}
}

// lines is how many notifications the whole flood holds.
func (f *floodReader) lines() int64 { return f.total / int64(f.per) }

func (f *floodReader) Read(p []byte) (int, error) {
	left := f.total - f.served.Load()
	if left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n := copy(p, f.block[f.off:])
	f.off = (f.off + n) % len(f.block)
	f.served.Add(int64(n))
	return n, nil
}

// heapSampler tracks the largest heap seen, sampled from runtime/metrics:
// bytes in heap objects, live or not yet swept, which is what the process
// holds for them; and the largest live heap a garbage collection found,
// which is what the connection retains, apart from the collector's timing.
type heapSampler struct {
	s        []metrics.Sample
	peak     uint64
	peakLive uint64
}

func newHeapSampler() *heapSampler {
	return &heapSampler{s: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}}
}

func (h *heapSampler) sample() {
	metrics.Read(h.s)
	h.peak = max(h.peak, h.s[0].Value.Uint64())
	h.peakLive = max(h.peakLive, h.s[1].Value.Uint64())
}

// slowClient handles session/update slower than the connection can read:
// it hashes the text several times over, so the reader runs into the
// queue bound and must wait. At every notification it records how far the
// reader has got ahead of it; every 256 it samples the heap.
type slowClient struct {
	*chunkCounter
	src  *floodReader
	lag  int64 // most bytes served by src but not yet handled
	heap *heapSampler
	seed maphash.Seed
	sum  uint64
}

func newSlowClient(src *floodReader) *slowClient {
	return &slowClient{chunkCounter: newChunkCounter(int(src.lines())), src: src, heap: newHeapSampler(), seed: maphash.MakeSeed()}
}

func (c *slowClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	text := oursChunkText(n)
	for range 16 {
		c.sum ^= maphash.String(c.seed, text)
	}
	c.saw(text)
	handled := c.n.Load()
	c.lag = max(c.lag, c.src.served.Load()-handled*int64(c.src.per))
	if handled%256 == 0 {
		c.heap.sample()
	}
	return nil
}

func (*slowClient) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return nil, errors.New("bench: no permission requests expected")
}

// BenchmarkFlood sends 1 GiB of session/update notifications into a
// handler slower than the reader (issue #15) and reports, over its runs:
// the peak heap in MiB (the connection's bounded queue must hold the reader
// back instead of buffering the flood), the bytes allocated per input byte
// (garbage is what lets the heap overshoot under load) and how far, in
// KiB, the reader ever got ahead of the handler. One op is the whole flood.
func BenchmarkFlood(b *testing.B) {
	var peak, peakLive uint64
	var lag int64
	var allocPerByte float64
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	for b.Loop() {
		b.StopTimer()
		runtime.GC() // start from the benchmark's own live heap, not earlier garbage
		src := newFloodReader(floodBytes)
		h := newSlowClient(src)
		h.heap.sample()
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		b.StartTimer()
		conn := acpsdk.NewClientSide(src, io.Discard, h, nil)
		<-conn.Done()
		closeOrFail(b, conn)
		metrics.Read(allocs)
		allocPerByte = max(allocPerByte, float64(allocs[0].Value.Uint64()-before)/float64(src.total))
		h.heap.sample()
		checkCount(b, h.chunkCounter)
		peak = max(peak, h.heap.peak)
		peakLive = max(peakLive, h.heap.peakLive)
		lag = max(lag, h.lag)
	}
	b.SetBytes(floodBytes)
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-MiB")
	b.ReportMetric(allocPerByte, "alloc-B/in-B")
	// About the backlog's bound (64 KiB) plus what the read buffer holds:
	// the reader ran ahead until the bound held it back.
	b.ReportMetric(float64(lag)/(1<<10), "peak-lag-KiB")
}
