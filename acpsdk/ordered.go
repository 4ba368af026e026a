package acpsdk

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/segmentio/encoding/json"
)

// InboundKind says what an [Inbound] carries.
type InboundKind uint8

const (
	// InboundNotification is a notification (Inbound.Request).
	InboundNotification InboundKind = iota + 1
	// InboundRequest is a request (Inbound.Request), to be answered
	// through Inbound.Reply.
	InboundRequest
	// InboundResponse is the answer to one of our calls (Inbound.Call), or
	// a response matching no call in flight (Call nil, Inbound.ID set).
	InboundResponse
	// InboundBadLine is a line that is not a JSON-RPC message
	// (Inbound.Line, Inbound.Reason); the connection has answered it per
	// SDK-10 already.
	InboundBadLine
	// InboundOversize is a line longer than the line bound, skipped
	// (Inbound.Oversize).
	InboundOversize
	// InboundEnd is the end of the connection (Inbound.Err); it is always
	// the last item delivered.
	InboundEnd
	// InboundMark is a point placed in the sequence by [Conn.Mark]
	// (Inbound.Mark).
	InboundMark
)

// String names the kind.
func (k InboundKind) String() string {
	switch k {
	case InboundNotification:
		return "notification"
	case InboundRequest:
		return "request"
	case InboundResponse:
		return "response"
	case InboundBadLine:
		return "bad line"
	case InboundOversize:
		return "oversize line"
	case InboundEnd:
		return "end"
	case InboundMark:
		return "mark"
	}
	return "unknown"
}

// Inbound is one thing read from the peer, as an [OrderedFunc] receives
// it. Only the fields of its Kind are set.
type Inbound struct {
	Kind InboundKind
	// Request is the notification or request.
	Request *Request
	// Reply answers the request; it must be used exactly once.
	Reply *Reply
	// Call is the call a response answered; [Inbound.Result] decodes the
	// answer. The call completes (its Done closes, a caller waiting in
	// Call or Result wakes) once the consumer has returned, so whatever
	// the caller does next comes after the item.
	Call *PendingCall
	// ID is the id of a response exactly as sent.
	ID json.RawMessage
	// Line is a bad line as read, and Reason what is wrong with it.
	Line   []byte
	Reason string
	// Oversize describes a skipped oversize line.
	Oversize *OversizeError
	// Err is why the connection ended: a *ConnError matching ErrClosed.
	Err error
	// Mark is the value given to [Conn.Mark].
	Mark any

	answered *outgoingCall // a response's call, its outcome already set
}

// errNotAnswer is Result on an item that answers no call of ours.
var errNotAnswer = errors.New("acpsdk: the item is not the answer to a call")

// Result decodes the answer a response carries into into, as
// [PendingCall.Result] does, without waiting: an error answer is an
// *Error. It fails for an item that is not the answer to one of our calls.
func (in *Inbound) Result(into any) error {
	if in.answered == nil {
		return errNotAnswer
	}
	return in.answered.decode(into)
}

// OrderedFunc receives everything a connection made by [NewOrderedConn]
// reads, one item at a time, in the order it was read: notifications,
// requests (each with a [Reply] to answer it, now or later), responses to
// our calls (after the call's outcome is set), lines that are not
// messages, oversize lines, marks, and last the end of the connection. It
// runs on the dispatcher goroutine and may block: the inbound bound then
// stops the reader (backpressure). A call's answer reaches its caller only
// after the consumer has taken it, so a consumer must not wait on a call
// of its own while it stops taking items: use [Conn.Go] and take the
// answer from the sequence, or make the call with the consumer's ctx.
//
// A notification's Inbound, and its Request, are the consumer's only until
// it returns: the connection reuses them for the next notification, so
// that a notification costs no allocation of its own. To keep one, copy
// the Request (r := *in.Request; [Request.DecodeParams] still trusts the
// copy); its Params share the line, which is never written again, and may
// be kept. Every other item may be kept.
type OrderedFunc func(ctx context.Context, in *Inbound)

// NewOrderedConn starts a connection reading r and writing w whose
// consumer is f: everything read reaches f as one sequence in read order
// (see [OrderedFunc]), for a consumer that must decide each item knowing
// what came before it (the adapter's pump, EV-13). There is no Handler;
// the Observer is still called. opts may be nil; Close, Flush and the
// calls are [NewConn]'s.
func NewOrderedConn(r io.Reader, w io.Writer, f OrderedFunc, opts *Options) *Conn {
	c := newConn(r, w, &ordered{f: f}, opts)
	c.pipe = newMarkPipe(r)
	c.lines = newLineReader(&markingReader{r: r, c: c, pipe: c.pipe}, c.maxLine)
	c.run()
	return c
}

// ordered is the consumer of a Conn made by NewOrderedConn.
type ordered struct {
	f OrderedFunc
	// note is every notification's Inbound in turn (see OrderedFunc):
	// only the dispatcher takes items, one at a time.
	note inboundNotification
}

// inboundNotification is a notification's Inbound with its Request.
type inboundNotification struct {
	Inbound
	req Request
}

func (o *ordered) take(c *Conn, it item) bool {
	var in *Inbound
	if it.kind == InboundNotification {
		n := &o.note
		*n = inboundNotification{Inbound: Inbound{Kind: it.kind}, req: Request{Method: it.method, Params: it.params, validated: it.params}}
		n.Request = &n.req
		in = &n.Inbound
	} else {
		in = &Inbound{Kind: it.kind}
	}
	switch it.kind {
	case InboundRequest:
		ctx, cancel, s, req := c.startRequest(it.req)
		in.Request = req
		in.Reply = &Reply{c: c, req: req, f: it.req, ctx: ctx, cancel: cancel, scope: s}
		o.deliver(c, in)
		return false // the request holds its share until its Reply is used
	case InboundResponse:
		in.ID = it.id
		if it.call != nil {
			in.Call = &PendingCall{c: c, p: it.call}
			in.answered = it.call
		}
	case InboundBadLine:
		in.Line, in.Reason = it.line, it.reason
	case InboundOversize:
		in.Oversize = it.oversize
	case InboundMark:
		in.Mark = it.mark
	}
	o.deliver(c, in)
	if it.call != nil && !it.answered {
		// Completed after the consumer took the item: whatever the
		// caller does once its call returns comes after it.
		c.complete(it.call)
	}
	return true
}

// quick: never; the consumer sees every item, and may block.
func (o *ordered) quick(InboundKind) bool { return false }

func (o *ordered) takeNow(c *Conn, it item) {
	if o.take(c, it) {
		c.inbox.release(it.size)
	}
}

func (o *ordered) end(c *Conn, err error) {
	o.deliver(c, &Inbound{Kind: InboundEnd, Err: err})
}

// deliver runs the consumer as a notification handler runs: calls it
// makes with its ctx are recognised, so their answers skip the queue.
func (o *ordered) deliver(c *Conn, in *Inbound) {
	c.notifScope.active.Store(true)
	defer c.notifScope.active.Store(false)
	o.f(c.notifCtx, in)
}

// Reply answers one request an [OrderedFunc] received. It may be used from
// any goroutine, at any time after delivery: the consumer decides in read
// order and may answer later, so a request that waits for something never
// holds up the items behind it. Until it is used the request counts
// against the inbound bound, as a running request handler does.
type Reply struct {
	c      *Conn
	req    *Request
	f      *incomingRequest
	ctx    context.Context
	cancel context.CancelFunc
	scope  *scope
	once   sync.Once
}

// Context is cancelled when the peer cancels the request ($/cancel_request)
// or the connection ends. Calls to the peer made under it (or a context
// derived from it) before the answer lift the inbound bound, as calls from
// a request handler do.
func (r *Reply) Context() context.Context { return r.ctx }

// Answer sends the answer: result, or err mapped as a [Handler]'s error is
// (an *Error as is, a context error after cancellation -32800, anything
// else -32603). It waits for room in the write queue (at most until the
// connection closes) and does nothing after the first use of r.
func (r *Reply) Answer(result any, err error) {
	r.once.Do(func() {
		r.scope.active.Store(false)
		r.c.answerRequest(r.ctx, r.cancel, r.req, r.f, result, err)
	})
}

// Skip leaves the request unanswered and releases its bound. JSON-RPC wants
// every request answered; Skip is for a peer that treats one carrying an id
// as a notification.
func (r *Reply) Skip() {
	r.once.Do(func() {
		r.scope.active.Store(false)
		r.cancel()
		r.c.forgetIncoming(r.req.ID, r.f)
		r.c.inbox.release(r.f.size)
	})
}

// Mark places an InboundMark item carrying v in the sequence of a
// connection made by [NewOrderedConn], after every line the peer had
// written when Mark was called: a consumer that starts something at the
// mark (a turn, say) has then handled everything the peer wrote before it,
// and what the peer writes later follows the mark. When the stream is a
// pipe the runtime's poller reads (an *os.File on Linux and macOS), that
// includes the bytes waiting in it that the reader has not taken yet;
// otherwise it is every line the connection has read so far. Mark never
// waits. It reports false when no mark can come any more: the inbound
// stream has ended (its InboundEnd follows) or the connection is closed,
// or the connection has no OrderedFunc.
func (c *Conn) Mark(v any) bool {
	if _, ok := c.consumer.(*ordered); !ok {
		return false
	}
	c.markMu.Lock()
	defer c.markMu.Unlock()
	if c.readEnded || c.isClosing() {
		return false
	}
	it := item{kind: InboundMark, mark: v}
	at := c.read
	if p := c.pipe; p != nil {
		at += p.buffered()
	}
	if c.readerIdle && len(c.marks) == 0 && at == c.read {
		// The reader waits for bytes, every line it took is queued and
		// the stream holds nothing more.
		c.inbox.pushNow(it)
		return true
	}
	// The reader places it once it has read that far.
	c.marks = append(c.marks, pendingMark{it: it, at: at})
	return true
}

// pendingMark is a mark waiting for the reader: it goes once the reader
// has read at bytes of the stream and queued the lines they complete.
type pendingMark struct {
	it item
	at int64
}

// markingReader is an ordered connection's stream. Before each read of new
// bytes it places the marks whose place it has reached (the reader reads
// only once every complete line before was queued), and it keeps, under
// markMu, the count of bytes read and whether the reader waits for more,
// so that Mark can tell where its mark goes. On a pipe (pipe non-nil) each
// attempt takes the bytes under markMu and never waits there, so no byte is
// ever taken without being counted; otherwise the reader is counted idle
// for the whole of a read.
type markingReader struct {
	r    io.Reader
	c    *Conn
	pipe *markPipe
}

func (m *markingReader) Read(b []byte) (int, error) {
	if m.pipe != nil {
		return m.readPipe(b)
	}
	c := m.c
	c.markMu.Lock()
	c.placeMarks()
	c.readerIdle = true
	c.markMu.Unlock()
	n, err := m.r.Read(b)
	c.markMu.Lock()
	c.readerIdle = false
	c.read += int64(max(n, 0))
	c.markMu.Unlock()
	return n, err
}

// readPipe reads the pipe through the poller: each attempt places the
// marks due, then reads what the pipe holds without waiting, all under
// markMu; when it holds nothing the reader is idle until the poller says
// bytes came.
func (m *markingReader) readPipe(b []byte) (int, error) {
	c := m.c
	var n int
	var rerr error
	err := m.pipe.rc.Read(func(fd uintptr) bool {
		c.markMu.Lock()
		defer c.markMu.Unlock()
		c.placeMarks()
		var wait bool
		n, wait, rerr = tryRead(fd, b)
		c.readerIdle = wait
		c.read += int64(n)
		return !wait
	})
	if err != nil {
		// The file was closed under the wait: its own Read says so in
		// the words the connection knows (os.ErrClosed).
		return m.r.Read(b)
	}
	if rerr != nil && rerr != io.EOF {
		rerr = &os.PathError{Op: "read", Path: m.pipe.name, Err: rerr}
	}
	return n, rerr
}

// placeMarks queues the marks whose place the reader has reached; markMu
// is held.
func (c *Conn) placeMarks() {
	for len(c.marks) > 0 && c.marks[0].at <= c.read {
		c.inbox.pushNow(c.marks[0].it)
		c.marks = c.marks[1:]
	}
	if len(c.marks) == 0 {
		c.marks = nil
	}
}

// endMarks runs when the inbound stream ends: waiting marks go ahead of the
// end, later ones are refused.
func (c *Conn) endMarks() {
	c.markMu.Lock()
	for _, m := range c.marks {
		c.inbox.pushNow(m.it)
	}
	c.marks = nil
	c.readEnded = true
	c.markMu.Unlock()
}
