package acpsdk

import (
	"context"
	"errors"
	"io"
	"strconv"
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

// Inbound is one thing read from the peer, as delivered to
// Options.InOrder. Only the fields of its Kind are set.
type Inbound struct {
	Kind InboundKind
	// Request is the notification or request.
	Request *Request
	// Reply answers the request; it must be used exactly once.
	Reply *Reply
	// Call is the call a response answered; [Inbound.Result] decodes the
	// answer. The call completes (its Done closes, a caller waiting in
	// Call or Result wakes) once the callback has returned, so whatever
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

	answered *pendingCall // a response's call, its outcome already set
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

// InOrderFunc receives everything a [Conn] reads, one item at a time, in the
// order it was read; see Options.InOrder.
type InOrderFunc func(ctx context.Context, in *Inbound)

// Reply answers one inbound request delivered through Options.InOrder. It
// may be used from any goroutine, at any time after delivery: the consumer
// decides in read order and may answer later, so a request that waits for
// something never holds up the items behind it. Until it is used the request
// counts against the inbound bound, as a running request handler does.
type Reply struct {
	c      *Conn
	req    *Request
	f      *inflight
	size   int
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
		r.c.answerRequest(r.ctx, r.cancel, r.req, r.f, r.size, result, err)
	})
}

// Skip leaves the request unanswered and releases its bound. JSON-RPC wants
// every request answered; Skip is for a peer that treats one carrying an id
// as a notification (Sortie reads a session/update with "id": null as one).
func (r *Reply) Skip() {
	r.once.Do(func() {
		r.scope.active.Store(false)
		r.cancel()
		r.c.forgetInflight(r.req.ID, r.f)
		r.c.inbox.release(r.size)
	})
}

// Mark places an InboundMark item carrying v in the InOrder sequence, after
// every line the connection has received so far and before any line it
// receives later: a consumer that starts something at the mark (a turn, say)
// has then handled everything the peer wrote before it. A line is received
// once its bytes were read from the stream, so lines that arrived in one
// write before Mark are all ahead of the mark. Mark never waits. It reports
// false when no mark can come any more: the inbound stream has ended (its
// InboundEnd follows) or the connection is closed, or InOrder is not set.
func (c *Conn) Mark(v any) bool {
	if c.inOrder == nil {
		return false
	}
	c.markMu.Lock()
	defer c.markMu.Unlock()
	if c.readEnded || c.isClosing() {
		return false
	}
	in := &Inbound{Kind: InboundMark, Mark: v}
	if c.readerIdle {
		// The reader waits for bytes: everything received is queued.
		c.inbox.pushNow(inItem{event: in})
		return true
	}
	c.marks = append(c.marks, in)
	return true
}

// markingReader is the InOrder connection's stream: before each read of new
// bytes it queues the marks made since, then records that the reader is
// idle, so Mark can tell whether something received is still unqueued.
// bufio reads only when no complete line is buffered, and the reader reads
// only once every line before was queued.
type markingReader struct {
	r io.Reader
	c *Conn
}

func (m *markingReader) Read(b []byte) (int, error) {
	c := m.c
	c.markMu.Lock()
	c.flushMarks()
	c.readerIdle = true
	c.markMu.Unlock()
	n, err := m.r.Read(b)
	c.markMu.Lock()
	c.readerIdle = false
	c.markMu.Unlock()
	return n, err
}

// flushMarks queues the marks waiting for the reader; markMu is held.
func (c *Conn) flushMarks() {
	for _, in := range c.marks {
		c.inbox.pushNow(inItem{event: in})
	}
	c.marks = nil
}

// endMarks runs when the inbound stream ends: waiting marks go ahead of the
// end, later ones are refused.
func (c *Conn) endMarks() {
	if c.inOrder == nil {
		return
	}
	c.markMu.Lock()
	c.flushMarks()
	c.readEnded = true
	c.markMu.Unlock()
}

// queueInOrder puts a non-message item (a response, a bad or oversize line)
// in the inbound queue behind what was read before it; without InOrder it
// does nothing. It reports false once the connection is closing.
func (c *Conn) queueInOrder(in *Inbound, call *pendingCall, size int) bool {
	if c.inOrder == nil {
		return true
	}
	if !c.inbox.push(inItem{event: in, call: call, size: size}) {
		// Close stopped the inbox after this call left the pending table
		// and before its answer was queued: neither endCalls nor stop saw
		// it, so it is completed here, with the answer that arrived.
		if call != nil {
			c.complete(call)
		}
		return false
	}
	return true
}

// queueResponse is handleResponse's ordered path: the answer reaches its
// caller when the dispatcher gets to it, after everything read before it.
// A call made from inside the running InOrder callback is answered now
// (the callback would otherwise wait on itself) and still reported in
// order.
func (c *Conn) queueResponse(p *pendingCall, size int) bool {
	in := &Inbound{Kind: InboundResponse, Call: &PendingCall{c: c, p: p}, ID: idBytes(p.id), answered: p}
	if p.inHandler {
		c.complete(p)
		return c.queueInOrder(in, nil, size)
	}
	return c.queueInOrder(in, p, size)
}

func idBytes(id int64) json.RawMessage {
	return strconv.AppendInt(nil, id, 10)
}

// dispatchInOrder delivers one queued item to the InOrder callback on the
// dispatcher goroutine and releases its bound; a request keeps its bound
// until its Reply is used.
func (c *Conn) dispatchInOrder(it *inItem) {
	switch {
	case it.event != nil:
		c.deliverInOrder(it.event)
		if it.call != nil {
			// Completed after the callback took the item: whatever the
			// caller does once its call returns comes after it.
			c.complete(it.call)
		}
		c.inbox.release(it.size)
	case it.msg.kind == kindNotification:
		c.deliverInOrder(&Inbound{Kind: InboundNotification, Request: &Request{Method: it.msg.method, Params: it.msg.params}})
		for _, p := range c.inbox.notificationHandled(it.size) {
			c.complete(p)
		}
	default:
		ctx, cancel, s, req := c.startRequest(it.req)
		r := &Reply{c: c, req: req, f: it.req, size: it.size, ctx: ctx, cancel: cancel, scope: s}
		c.deliverInOrder(&Inbound{Kind: InboundRequest, Request: req, Reply: r})
	}
}

// deliverInOrder runs the callback as a notification handler runs: calls it
// makes with its ctx are recognised, so their answers skip the queue.
func (c *Conn) deliverInOrder(in *Inbound) {
	c.notifScope.active.Store(true)
	defer c.notifScope.active.Store(false)
	c.inOrder(c.notifCtx, in)
}

// answerRequest encodes and queues a request's answer, then releases what
// the request held: its context, its cancel handle and its bound.
func (c *Conn) answerRequest(ctx context.Context, cancel context.CancelFunc, req *Request, f *inflight, size int, result any, err error) {
	var frame []byte
	if err == nil {
		frame, err = appendResult(make([]byte, 0, frameCap), req.ID, result)
	}
	if err != nil {
		e := wireError(ctx, err)
		if e.Code == CodeMethodNotFound {
			c.ev.methodNotFound(req.Method, req.ID)
		}
		frame = appendError(nil, req.ID, e)
	}
	cancel()
	c.forgetInflight(req.ID, f)
	_ = c.send(context.Background(), outFrame{data: frame})
	c.inbox.release(size)
}

// forgetInflight drops a request's cancel handle unless a later request
// reused its id.
func (c *Conn) forgetInflight(id json.RawMessage, f *inflight) {
	c.mu.Lock()
	if c.inflight[string(id)] == f {
		delete(c.inflight, string(id))
	}
	c.mu.Unlock()
}
