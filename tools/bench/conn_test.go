package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	acp "github.com/coder/acp-go-sdk"
	"github.com/segmentio/encoding/json"
)

// pingParams and pingResult are the round trip's request and answer: small,
// like most ACP control requests.
var (
	pingParams = json.RawMessage(`{"sessionId":"sess_7f3a9c2e41b8","modeId":"code"}`)
	pingResult = json.RawMessage(`{}`)
)

// pipePair is two OS pipes, one each way, as between a client and an agent
// process.
type pipePair struct {
	aR, aW *os.File // a reads from aR, writes to aW
	bR, bW *os.File
}

func newPipePair(tb testing.TB) *pipePair {
	tb.Helper()
	abR, abW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	baR, baW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	return &pipePair{aR: baR, aW: abW, bR: abR, bW: baW}
}

// BenchmarkRoundTrip measures one request and its response (issue #3):
// between two acpsdk connections over OS pipes, and as the floor, a raw
// line written to one pipe, echoed by a goroutine to the other, and read
// back. Both carry the same request line.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("acpsdk", func(b *testing.B) {
		p := newPipePair(b)
		agent := acpsdk.NewConn(p.bR, p.bW, acpsdk.HandlerFunc(func(context.Context, *acpsdk.Request) (any, error) {
			return pingResult, nil
		}), nil)
		client := acpsdk.NewConn(p.aR, p.aW, nil, nil)
		defer func() {
			closeOrFail(b, client)
			closeOrFail(b, agent)
		}()
		ctx := context.Background()
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			var res json.RawMessage
			if err := client.Call(ctx, gen.MethodSessionSetMode, pingParams, &res); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("echo", func(b *testing.B) {
		p := newPipePair(b)
		echoed := make(chan error, 1)
		go func() {
			echoed <- echoLines(p.bR, p.bW)
		}()
		in := bufio.NewReader(p.aR)
		var line []byte
		b.ReportAllocs()
		id := 0
		cpu := cpuClock(b)
		for b.Loop() {
			id++
			line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
			line = strconv.AppendInt(line, int64(id), 10)
			line = append(line, `,"method":"session/set_mode","params":`...)
			line = append(line, pingParams...)
			line = append(line, "}\n"...)
			if _, err := p.aW.Write(line); err != nil {
				b.Fatal(err)
			}
			if _, err := in.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
		b.StopTimer()
		closeAll(b, p.aW, p.aR)
		if err := <-echoed; err != nil {
			b.Fatal(err)
		}
		closeAll(b, p.bR, p.bW)
	})
}

// echoLines copies r to w a line at a time until r ends.
func echoLines(r io.Reader, w io.Writer) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
}

func closeOrFail(tb testing.TB, c io.Closer) {
	tb.Helper()
	if err := c.Close(); err != nil {
		tb.Error(err)
	}
}

func closeAll(tb testing.TB, cs ...io.Closer) {
	tb.Helper()
	for _, c := range cs {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
	}
}

// notificationCount is the stream length issue #3 asks for.
const notificationCount = 100_000

// chunkCounter is a session/update handler for both SDKs: it counts
// agent_message_chunk texts and bytes, so the typed value is really used,
// and says when it has seen want of them.
type chunkCounter struct {
	want     int64
	n        atomic.Int64
	bytes    int64
	all      chan struct{}
	progress chan struct{} // ticks (without blocking) after each count
}

func newChunkCounter(want int) *chunkCounter {
	return &chunkCounter{want: int64(want), all: make(chan struct{}), progress: make(chan struct{}, 1)}
}

func (c *chunkCounter) saw(text string) {
	c.bytes += int64(len(text))
	if c.n.Add(1) == c.want {
		close(c.all)
	}
	select {
	case c.progress <- struct{}{}:
	default:
	}
}

// oursClient is chunkCounter as a gen.Client.
type oursClient struct{ *chunkCounter }

func (c oursClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	c.saw(oursChunkText(n))
	return nil
}

func (oursClient) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return nil, errors.New("bench: no permission requests expected")
}

// coderClient is chunkCounter as coder's acp.Client; only SessionUpdate is
// ever called.
type coderClient struct {
	*chunkCounter
	acp.Client // nil: any other method would panic, which the stream never asks for
}

func (c coderClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.saw(coderChunkText(&n))
	return nil
}

// BenchmarkNotifications pushes 100,000 session/update notifications
// through each side (issue #3): ours (acpsdk.ClientSide with a gen.Client),
// coder's client-side connection, and the floor, a bufio line scan of the
// same bytes that does nothing with the lines. One op is the whole stream;
// MB/s is its throughput. scandecode, no target, is the line scan plus a
// segmentio decode of each line into plain structs: what a decoder that
// ignores the protocol's rules costs, for reading the floor ratio.
func BenchmarkNotifications(b *testing.B) {
	stream := chunkStream(notificationCount)
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			cc := newChunkCounter(notificationCount)
			conn := acpsdk.NewClientSide(bytes.NewReader(stream), io.Discard, oursClient{cc}, nil)
			<-conn.Done()
			closeOrFail(b, conn)
			checkCount(b, cc)
		}
		reportCPU(b, cpu)
	})
	b.Run("coder", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			cc := newChunkCounter(notificationCount)
			conn := newCoderConn(cc, newWindowReader(stream, cc, coderWindow))
			waitCoder(b, conn, cc)
		}
		reportCPU(b, cpu)
	})
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(stream))
			sc.Buffer(make([]byte, 0, 64<<10), acpsdk.DefaultMaxLineBytes)
			n := 0
			for sc.Scan() {
				n++
			}
			if n != notificationCount {
				b.Fatalf("scanned %d lines, want %d", n, notificationCount)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("scandecode", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(stream))
			sc.Buffer(make([]byte, 0, 64<<10), acpsdk.DefaultMaxLineBytes)
			cc := newChunkCounter(notificationCount)
			for sc.Scan() {
				var m floorMessage
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					b.Fatal(err)
				}
				cc.saw(m.Params.Update.Content.Text)
			}
			checkCount(b, cc)
		}
		reportCPU(b, cpu)
	})
}

// floorMessage is a notification line as plain structs.
type floorMessage struct {
	JSONRPC string            `json:"jsonrpc"`
	Method  string            `json:"method"`
	Params  floorNotification `json:"params"`
}

func checkCount(tb testing.TB, cc *chunkCounter) {
	tb.Helper()
	if got := cc.n.Load(); got != cc.want {
		tb.Fatalf("handler saw %d notifications, want %d", got, cc.want)
	}
	if cc.bytes == 0 {
		tb.Fatal("handler saw no text")
	}
}

// newCoderConn starts coder's client-side connection on r with its logs
// discarded. Its reader starts in the constructor and reads the logger
// unsynchronised, so SetLogger after the constructor is a data race unless
// the reader is held back until the logger is set: r opens only then.
func newCoderConn(cc *chunkCounter, r io.Reader) *acp.ClientSideConnection {
	g := &gatedReader{r: r, open: make(chan struct{})}
	conn := acp.NewClientSideConnection(coderClient{chunkCounter: cc}, io.Discard, g)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	close(g.open)
	return conn
}

// gatedReader blocks reads of r until open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// coderGiveUp bounds the wait for coder's connection to hand over the last
// notification once its input has ended; it only guards against a hang.
const coderGiveUp = time.Minute

// waitCoder waits until coder's connection has handed every notification to
// the handler. Its Done closes when input ends, before queued notifications
// are handled, so the handler's count is what tells the end.
func waitCoder(tb testing.TB, conn *acp.ClientSideConnection, cc *chunkCounter) {
	tb.Helper()
	select {
	case <-cc.all:
		<-conn.Done()
		return
	case <-conn.Done():
	}
	select {
	case <-cc.all:
	case <-time.After(coderGiveUp):
		tb.Fatalf("coder's connection ended after handling %d of %d notifications", cc.n.Load(), cc.want)
	}
}
