package acpsdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// sequence records what an OrderedFunc receives, one line per item.
type sequence struct {
	mu      sync.Mutex
	items   []string
	replies []*Reply
	end     chan struct{}
}

func newSequence() *sequence { return &sequence{end: make(chan struct{})} }

func (s *sequence) add(ctx context.Context, in *Inbound) {
	var line string
	switch in.Kind {
	case InboundNotification:
		line = "notification " + in.Request.Method + " " + string(in.Request.Params)
	case InboundRequest:
		line = "request " + in.Request.Method + " " + string(in.Request.ID)
	case InboundResponse:
		line = "response " + string(in.ID)
		if in.Call != nil {
			var res string
			err := in.Result(&res)
			line += " " + in.Call.Method() + " " + res
			if err != nil {
				line += " " + err.Error()
			}
		}
	case InboundBadLine:
		line = "bad line " + in.Reason
	case InboundOversize:
		line = "oversize " + itoa(in.Oversize.Size)
	case InboundMark:
		line = "mark " + in.Mark.(string)
	case InboundEnd:
		line = "end not ErrClosed"
		if ce, ok := errors.AsType[*ConnError](in.Err); ok && errors.Is(in.Err, ErrClosed) {
			line = "end " + ce.Op
		}
	}
	s.mu.Lock()
	s.items = append(s.items, line)
	if in.Reply != nil {
		s.replies = append(s.replies, in.Reply)
	}
	s.mu.Unlock()
	if in.Kind == InboundEnd {
		close(s.end)
	}
}

func (s *sequence) list() ([]string, []*Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.items...), append([]*Reply(nil), s.replies...)
}

// TestSDK7_InOrderOneSequence: everything the peer writes in one write
// (notifications, requests, a line that is not JSON, the answer to our call,
// an oversize line, a stray response, the end) is delivered in read order;
// requests are answered later, from another goroutine, after the end.
func TestSDK7_InOrderOneSequence(t *testing.T) {
	for range 200 {
		seq := newSequence()
		c, p := newOrderedPeer(t, seq.add, &Options{MaxLineBytes: 256})
		pc, err := c.Go(context.Background(), "prompt", map[string]int{"n": 1})
		require.NoError(t, err)
		require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"n":1}}`, p.recv())
		lines := []string{
			`{"jsonrpc":"2.0","method":"update","params":{"i":1}}`,
			`{"jsonrpc":"2.0","id":"r1","method":"permission","params":{}}`,
			`this is not json`,
			`{"jsonrpc":"2.0","method":"update","params":{"i":2}}`,
			`{"jsonrpc":"2.0","id":1,"result":"done"}`,
			`{"jsonrpc":"2.0","id":null,"method":"permission","params":{}}`,
			`{"jsonrpc":"2.0","method":"update","params":{"i":3}}`,
			`{"jsonrpc":"2.0","method":"update","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`,
			`{"jsonrpc":"2.0","id":999,"result":{}}`,
			`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{}}`,
		}
		p.send(strings.Join(lines, "\n"))
		p.closeInput()
		await(t, seq.end)
		got, replies := seq.list()
		require.Equal(t, []string{
			`notification update {"i":1}`,
			`request permission "r1"`,
			`bad line line is not JSON`,
			`notification update {"i":2}`,
			`response 1 prompt done`,
			`request permission null`,
			`notification update {"i":3}`,
			`oversize 355`,
			`response 999`,
			`request fs/read_text_file 7`,
			`end read`,
		}, got)
		require.True(t, isDone(pc.Done()), "the call completed once its item was taken")

		// Answered after the end, off the dispatcher: the writer still runs.
		var wg sync.WaitGroup
		for i, r := range replies {
			wg.Go(func() {
				if i == 2 {
					r.Answer(nil, ErrMethodNotFound)
					return
				}
				r.Answer(map[string]int{"answer": i}, nil)
			})
		}
		wg.Wait()
		out := []string{p.recv(), p.recv(), p.recv(), p.recv()}
		sort.Strings(out)
		assert.Equal(t, []string{
			`{"jsonrpc":"2.0","id":"r1","result":{"answer":0}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			`{"jsonrpc":"2.0","id":null,"result":{"answer":1}}`,
		}, out)
		require.NoError(t, c.Close())
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestSDK7_InOrderCallFromCallback: a call made from inside the callback,
// with its ctx, is answered at once although the dispatcher waits on it,
// and its response still appears in the sequence where it was read.
func TestSDK7_InOrderCallFromCallback(t *testing.T) {
	seq := newSequence()
	var c *Conn
	called := make(chan error, 1)
	inOrder := func(ctx context.Context, in *Inbound) {
		if in.Kind == InboundNotification && in.Request.Method == "ask" {
			var res string
			err := c.Call(ctx, "question", nil, &res)
			if err == nil && res != "yes" {
				err = errors.New("answer " + res)
			}
			called <- err
		}
		seq.add(ctx, in)
	}
	c, p := newOrderedPeer(t, inOrder, &Options{MaxQueuedMessages: 1})
	p.send(`{"jsonrpc":"2.0","method":"ask"}`)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"question"}`, p.recv())
	p.send(`{"jsonrpc":"2.0","method":"update","params":{"i":1}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":"yes"}`)
	require.NoError(t, await(t, called))
	p.closeInput()
	await(t, seq.end)
	got, _ := seq.list()
	assert.Equal(t, []string{"notification ask ", `notification update {"i":1}`, "response 1 question yes", "end read"}, got)
}

// TestSDK7_InOrderCallFromOtherGoroutine: a Call waiting on another
// goroutine returns once the callback has taken its answer, after the items
// read before it.
func TestSDK7_InOrderCallFromOtherGoroutine(t *testing.T) {
	seq := newSequence()
	c, p := newOrderedPeer(t, seq.add, nil)
	res := make(chan string, 1)
	go func() {
		var r string
		if err := c.Call(context.Background(), "initialize", nil, &r); err != nil {
			r = err.Error()
		}
		got, _ := seq.list()
		res <- r + " after " + strings.Join(got, ", ")
	}()
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, p.recv())
	p.send(`{"jsonrpc":"2.0","method":"update","params":{"i":1}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":"ok"}`)
	assert.Equal(t, `ok after notification update {"i":1}, response 1 initialize ok`, await(t, res))
}

// TestSDK9_InOrderCloseCompletesQueuedAnswers: Close while the consumer is
// blocked completes every call, whether its answer was queued or not, and
// the sequence still ends with the end item.
func TestSDK9_InOrderCloseCompletesQueuedAnswers(t *testing.T) {
	for range 50 {
		seq := newSequence()
		blocked := make(chan struct{})
		inOrder := func(ctx context.Context, in *Inbound) {
			if in.Kind == InboundNotification {
				close(blocked)
				<-ctx.Done() // until Close
			}
			seq.add(ctx, in)
		}
		c, p := newOrderedPeer(t, inOrder, nil)
		pc, err := c.Go(context.Background(), "prompt", nil)
		require.NoError(t, err)
		p.recv()
		p.send(`{"jsonrpc":"2.0","method":"update"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":"late"}`)
		await(t, blocked)
		require.NoError(t, c.Close())
		await(t, pc.Done())
		if err := pc.Result(nil); err != nil {
			assert.ErrorIs(t, err, ErrClosed)
		}
		got, _ := seq.list()
		assert.Equal(t, "end close", got[len(got)-1])
	}
}

// TestSDK9_InOrderSkipReleasesBound: with a bound of one message, a second
// request is delivered only once the first releases its bound; Skip does
// so without an answer.
func TestSDK9_InOrderSkipReleasesBound(t *testing.T) {
	seq := newSequence()
	got := make(chan *Reply, 4)
	inOrder := func(ctx context.Context, in *Inbound) {
		seq.add(ctx, in)
		if in.Reply != nil {
			got <- in.Reply
		}
	}
	c, p := newOrderedPeer(t, inOrder, &Options{MaxQueuedMessages: 1})
	p.sendAsync(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
	p.sendAsync(`{"jsonrpc":"2.0","id":2,"method":"b"}`)
	first := await(t, got)
	first.Skip()
	second := await(t, got)
	second.Answer("ok", nil)
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":"ok"}`, p.recv(), "the skipped request is never answered")
	p.closeInput()
	await(t, seq.end)
	_ = c
}

// TestSDK7_InOrderMarkFollowsWhatWasReceived: a mark placed while the
// callback handles the first of several lines that arrived in one write
// comes after all of them, never between.
func TestSDK7_InOrderMarkFollowsWhatWasReceived(t *testing.T) {
	for range 200 {
		seq := newSequence()
		var c *Conn
		marked, placed := make(chan struct{}), make(chan bool, 1)
		inOrder := func(ctx context.Context, in *Inbound) {
			seq.add(ctx, in)
			switch in.Kind {
			case InboundResponse:
				placed <- c.Mark("after the answer")
			case InboundMark:
				close(marked)
			}
		}
		c, p := newOrderedPeer(t, inOrder, nil)
		_, err := c.Go(context.Background(), "prompt", nil)
		require.NoError(t, err)
		p.recv()
		p.send(`{"jsonrpc":"2.0","id":1,"result":"done"}` + "\n" +
			`{"jsonrpc":"2.0","id":5,"method":"permission"}` + "\n" +
			`{"jsonrpc":"2.0","method":"update","params":{"i":1}}`)
		require.True(t, await(t, placed))
		await(t, marked)
		p.closeInput()
		await(t, seq.end)
		got, _ := seq.list()
		require.Equal(t, []string{"response 1 prompt done", "request permission 5", `notification update {"i":1}`, "mark after the answer", "end read"}, got)
		assert.False(t, c.Mark("late"), "no mark after the end")
		require.NoError(t, c.Close())
	}
}

// TestSDK7_InOrderMarkFollowsBytesWaitingInThePipe: a line the peer wrote
// into the pipe before Mark goes ahead of the mark, also when the reader
// has not read it yet (it waits for the poller to wake it) or is reading it
// right then (issue #23: a request written right after a prompt's answer
// was taken into the next turn, whose mark went ahead of it). With one P
// the test writes the line and marks before the reader can run; with two
// the reader runs beside it.
func TestSDK7_InOrderMarkFollowsBytesWaitingInThePipe(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("a mark counts the bytes waiting in a pipe on Linux and macOS only")
	}
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for i := range 300 {
				markAfterPipedLine(t, i)
			}
		})
	}
}

// markAfterPipedLine is one run of TestSDK7_InOrderMarkFollowsBytesWaitingInThePipe.
func markAfterPipedLine(t *testing.T, i int) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	seq := newSequence()
	first := make(chan struct{}, 1)
	c := NewOrderedConn(r, io.Discard, func(ctx context.Context, in *Inbound) {
		seq.add(ctx, in)
		if in.Kind == InboundNotification {
			select {
			case first <- struct{}{}:
			default:
			}
		}
	}, nil)
	_, err = io.WriteString(w, `{"jsonrpc":"2.0","method":"a"}`+"\n")
	require.NoError(t, err)
	await(t, first)
	_, err = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"b"}`+"\n")
	require.NoError(t, err)
	require.True(t, c.Mark("after b"))
	require.NoError(t, w.Close())
	await(t, seq.end)
	got, replies := seq.list()
	require.Equal(t, []string{"notification a ", "request b 1", "mark after b", "end read"}, got, "iteration %d", i)
	for _, rp := range replies {
		rp.Skip()
	}
	require.NoError(t, c.Close())
}

// TestSDK9_InOrderSlowConsumerSlowsReader: a blocked InOrder callback
// stops the reader once the bound is full, drops nothing, and the
// connection carries on once the callback moves.
func TestSDK9_InOrderSlowConsumerSlowsReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var handled, reads atomic.Int32
		inOrder := func(ctx context.Context, in *Inbound) {
			switch in.Kind {
			case InboundRequest:
				in.Reply.Answer("pong", nil)
			case InboundNotification:
				<-gate
				handled.Add(1)
			}
		}
		opts := &Options{MaxQueuedMessages: 4, Tap: countReads(&reads)}
		c, p := newOrderedPeer(t, inOrder, opts)
		for i := range 100 {
			p.sendAsync(note(10 + i))
		}
		synctest.Wait()
		// 1 in the callback + 3 queued admitted, the 5th line waits.
		require.EqualValues(t, 5, reads.Load(), "lines read while the callback is stuck")
		close(gate)
		p.sync("1")
		require.EqualValues(t, 100, handled.Load(), "every notification delivered, none dropped")
		require.Nil(t, c.Err())
	})
}

// FuzzConnInOrder feeds arbitrary bytes to a Conn in InOrder mode: no
// panic, exactly one end item and it comes last, every request answered
// at most once, and every line written is one JSON-RPC message.
func FuzzConnInOrder(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}` + "\n" + `{"jsonrpc":"2.0","method":"note"}`,
		"garbage\n[1,2]\n{}\n{\"id\":null,\"method\":\"ping\"}\n",
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"slow"}`,
		`{"jsonrpc":"2.0","id":5,"result":1}` + "\r\n\n" + `{"jsonrpc":"2.0","id":"x","method":"nope"}`,
		strings.Repeat("x", 300) + "\n" + `{"id":0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":"a"}` + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"b"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out lockedBuffer
		var mu sync.Mutex
		var kinds []InboundKind
		var answering sync.WaitGroup
		var conn atomic.Pointer[Conn] // set once NewConn returns
		inOrder := func(ctx context.Context, it *Inbound) {
			mu.Lock()
			kinds = append(kinds, it.Kind)
			mu.Unlock()
			switch it.Kind {
			case InboundRequest:
				if it.Request.Method == "slow" {
					// Answered once cancelled: by $/cancel_request or
					// the connection's end.
					answering.Go(func() {
						<-it.Reply.Context().Done()
						it.Reply.Answer(nil, it.Reply.Context().Err())
					})
					return
				}
				it.Reply.Answer(echoHandler(ctx, it.Request))
				it.Reply.Answer("twice", nil) // ignored
			case InboundNotification:
				if c := conn.Load(); c != nil {
					c.Mark(it.Request.Method)
				}
			}
		}
		c := NewOrderedConn(bytes.NewReader(in), &out, inOrder, &Options{MaxLineBytes: 256, MaxQueuedMessages: 2})
		conn.Store(c)
		<-c.Done()
		require.ErrorIs(t, c.Err(), ErrClosed)
		answering.Wait()
		require.NoError(t, c.Flush(context.Background()))
		require.NoError(t, c.Close())

		mu.Lock()
		require.NotEmpty(t, kinds)
		require.Equal(t, InboundEnd, kinds[len(kinds)-1])
		for _, k := range kinds[:len(kinds)-1] {
			require.NotEqual(t, InboundEnd, k)
		}
		mu.Unlock()
		requireAnswersWellFormed(t, in, out.String())
	})
}

// TestSDK7_NotificationInboundIsTheConsumersUntilItReturns (issue #23): the
// connection reuses a notification's Inbound for the next one, so a
// notification costs no allocation of its own; a consumer keeps one by
// copying its Request, which then decodes, still trusted, after many
// notifications more.
func TestSDK7_NotificationInboundIsTheConsumersUntilItReturns(t *testing.T) {
	const n = 300
	kept := make(chan Request, n)
	var first *Inbound
	var seen int
	reused := make(chan bool, 1)
	consume := func(_ context.Context, in *Inbound) {
		if in.Kind != InboundNotification {
			return
		}
		switch seen++; seen {
		case 1:
			first = in
		case 2:
			reused <- in == first
		}
		kept <- *in.Request
	}
	_, p := newOrderedPeer(t, consume, nil)
	for i := range n {
		p.sendAsync(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s%d","update":{"sessionUpdate":"plan","entries":[]}}}`, i))
	}
	require.True(t, await(t, reused), "the second notification reuses the first's Inbound")
	for i := range n {
		r := await(t, kept)
		var note gen.SessionNotification
		require.NoError(t, r.DecodeParams(&note))
		require.Equal(t, gen.SessionID(fmt.Sprintf("s%d", i)), note.SessionID)
		require.True(t, within(string(note.SessionID), r.Params), "decoded trusted: shares the line")
	}
}
