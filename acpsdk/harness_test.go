package acpsdk

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// failsafe bounds waits that can only be long when the code under test is
// broken (a deadlock); it is never used to let something happen.
const failsafe = 10 * time.Second

// rawPeer is the far end of a Conn under test. It speaks raw lines, so
// tests can send anything and see exactly what the Conn wrote.
type rawPeer struct {
	t         testing.TB
	in        *io.PipeWriter // what the peer writes, the Conn reads
	out       *io.PipeReader // what the Conn writes, the peer reads
	lines     chan string
	done      chan struct{}
	outbox    chan outLine // one writer goroutine: io.Pipe serialises
	closeOnce sync.Once    // concurrent writers on a mutex synctest can't see
	pumpDone  chan struct{}
}

type outLine struct {
	line string
	done chan struct{}
}

// newRawPeer starts a Conn wired to a rawPeer. The Conn is closed at the
// end of the test.
func newRawPeer(t testing.TB, h Handler, opts *Options) (*Conn, *rawPeer) {
	t.Helper()
	var c *Conn
	p := startRawPeer(t, func(r io.Reader, w io.Writer) func() error {
		c = NewConn(r, w, h, opts)
		return c.Close
	})
	return c, p
}

// newOrderedPeer is newRawPeer for a Conn made by NewOrderedConn.
func newOrderedPeer(t testing.TB, f OrderedFunc, opts *Options) (*Conn, *rawPeer) {
	t.Helper()
	var c *Conn
	p := startRawPeer(t, func(r io.Reader, w io.Writer) func() error {
		c = NewOrderedConn(r, w, f, opts)
		return c.Close
	})
	return c, p
}

// startRawPeer wires a rawPeer to whatever start builds on the two pipe
// ends (a Conn, a ClientSide, ...); the close start returns runs at the
// end of the test.
func startRawPeer(t testing.TB, start func(r io.Reader, w io.Writer) (closeFn func() error)) *rawPeer {
	t.Helper()
	connIn, peerOut := io.Pipe()
	peerIn, connOut := io.Pipe()
	closeConn := start(connIn, connOut)
	p := &rawPeer{
		t: t, in: peerOut, out: peerIn,
		lines: make(chan string, 1024), done: make(chan struct{}),
		outbox: make(chan outLine, 4096), pumpDone: make(chan struct{}),
	}
	go p.readLoop()
	go p.pump()
	t.Cleanup(func() {
		require.NoError(t, closeConn())
		p.closeInput()
		<-p.pumpDone
		p.out.Close()
		<-p.done
	})
	return p
}

func (p *rawPeer) readLoop() {
	defer close(p.done)
	defer close(p.lines)
	br := bufio.NewReader(p.out)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		p.lines <- strings.TrimSuffix(line, "\n")
	}
}

func (p *rawPeer) pump() {
	defer close(p.pumpDone)
	defer p.in.Close()
	for l := range p.outbox {
		_, _ = io.WriteString(p.in, l.line+"\n")
		if l.done != nil {
			close(l.done)
		}
	}
}

// send writes one line (a newline is added). io.Pipe makes it return only
// once the Conn's reader has taken the bytes.
func (p *rawPeer) send(line string) {
	p.t.Helper()
	done := make(chan struct{})
	p.outbox <- outLine{line: line, done: done}
	await(p.t, done)
}

// sendAsync queues a line without waiting for the Conn to read it; lines
// keep their order with send's.
func (p *rawPeer) sendAsync(line string) { p.outbox <- outLine{line: line} }

// closeInput ends the Conn's inbound stream after the queued lines.
func (p *rawPeer) closeInput() { p.closeOnce.Do(func() { close(p.outbox) }) }

// recv returns the next line the Conn wrote.
func (p *rawPeer) recv() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		require.True(p.t, ok, "connection output ended")
		return l
	case <-time.After(failsafe):
		p.t.Fatal("no line from the connection (deadlock?)")
		return ""
	}
}

// recvMsg returns the next line decoded.
func (p *rawPeer) recvMsg() map[string]json.RawMessage {
	p.t.Helper()
	var m map[string]json.RawMessage
	line := p.recv()
	require.NoError(p.t, json.Unmarshal([]byte(line), &m), line)
	return m
}

// sync proves everything sent before it was processed and answered in order:
// it sends a ping request and requires the next output line to be its answer.
func (p *rawPeer) sync(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	require.Equal(p.t, `{"jsonrpc":"2.0","id":`+id+`,"result":"pong"}`, p.recv())
}

// echoHandler answers "ping" with "pong", "echo" with its params, and
// refuses everything else with -32601.
var echoHandler = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "ping":
		return "pong", nil
	case "echo":
		return req.Params, nil
	case "bad_params":
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params", Data: json.RawMessage(`{"path":"/sessionId"}`)}
	case "fail":
		return nil, io.ErrUnexpectedEOF
	case "panic":
		panic("handler bug")
	}
	return nil, ErrMethodNotFound
})

// recorder collects observer events.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) observer() Observer {
	return Observer{
		OversizeLine:          func(e *OversizeError) { r.add("oversize " + itoa(e.Size)) },
		UnparsableLine:        func(line []byte) { r.add("unparsable " + string(line)) },
		InvalidMessage:        func(line []byte, why string) { r.add("invalid " + why) },
		MethodNotFound:        func(m string, id json.RawMessage) { r.add("notfound " + m + " " + string(id)) },
		UnhandledNotification: func(m string) { r.add("unhandled " + m) },
		NotificationFailed:    func(m string, err error) { r.add("failed " + m + ": " + err.Error()) },
		UnmatchedResponse:     func(id json.RawMessage) { r.add("unmatched " + string(id)) },
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// await receives from ch, failing the test if nothing comes within the
// failsafe (in a synctest bubble: as soon as everything is blocked).
func await[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failsafe):
		t.Fatal("nothing arrived (deadlock?)")
		var zero T
		return zero
	}
}
