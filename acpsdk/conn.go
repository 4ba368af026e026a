package acpsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/segmentio/encoding/json"
)

// Defaults for [Options].
const (
	DefaultMaxQueuedMessages = 256
	DefaultMaxQueuedBytes    = 8 << 20
	DefaultMaxBacklogBytes   = 64 << 10
	DefaultWriteQueue        = 64
)

// MethodCancelRequest is the protocol-level cancellation notification,
// handled by the connection itself in both directions (SDK-8).
const MethodCancelRequest = "$/cancel_request"

// Request is one inbound request or notification as given to a [Handler].
type Request struct {
	// Method is the JSON-RPC method name.
	Method string
	// Params is the raw params member; nil when absent. It is a slice of
	// the line read, which the typed dispatch's decoded strings share:
	// treat it as read-only (copy it to change it).
	Params json.RawMessage
	// ID is the peer's id exactly as sent; nil for a notification.
	ID json.RawMessage
}

// IsNotification reports whether the message expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Handler handles inbound requests and notifications.
//
// For a request, the result is encoded as the response's result and an
// error becomes the response's error: an *Error (or an error wrapping one)
// is sent as is, a context error after the request was cancelled becomes
// -32800, anything else -32603. For a notification the result is ignored;
// an error matching ErrMethodNotFound is reported to
// Observer.UnhandledNotification and any other error to
// Observer.NotificationFailed.
//
// A handler may call the peer through the Conn with the ctx it was given
// (or one derived from it); see the package documentation for why the ctx
// matters.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Options configure a [Conn]. The zero value gives the defaults.
type Options struct {
	// MaxLineBytes bounds one inbound line; longer lines are skipped and
	// reported (default DefaultMaxLineBytes, 10 MiB).
	MaxLineBytes int
	// MaxQueuedMessages bounds inbound messages queued for the dispatcher
	// plus requests still being handled (default 256).
	MaxQueuedMessages int
	// MaxQueuedBytes bounds the bytes of those messages (default 8 MiB);
	// one message is always admitted, however large.
	MaxQueuedBytes int
	// MaxBacklogBytes bounds the bytes of the messages queued for the
	// dispatcher alone, requests being handled not counted (default 64
	// KiB): how far the reader runs ahead of a busy dispatcher. A message
	// that finds nothing queued is admitted, however large.
	MaxBacklogBytes int
	// WriteQueue is the number of outgoing messages that may wait for the
	// writer goroutine before senders block (default 64).
	WriteQueue int
	// Observer receives noteworthy events.
	Observer Observer
	// Tap, when set, sees every line read or written, without its
	// newline. It runs on the reader or writer goroutine and must not
	// modify or retain-and-modify the line.
	Tap func(dir Direction, line []byte)
	// Logger receives structured debug records; nil discards them.
	Logger *slog.Logger
	// NullIDIsNotification treats a message with "id": null as a
	// notification (never answered) instead of a request whose null id is
	// echoed. Some clients need this (e.g. Sortie's EV-12).
	NullIDIsNotification bool
	// InOrder, when set, receives everything read from the peer as one
	// sequence in read order: notifications, requests (each with a
	// [Reply] to answer it, now or later), responses to our calls (after
	// the call's outcome is set), lines that are not messages, oversize
	// lines, and last the end of the connection. It runs on the
	// dispatcher goroutine, one item at a time, and may block: the
	// inbound bound then stops the reader (backpressure). The Handler is
	// not called; the Observer still is. A call's answer reaches its
	// caller only after the callback has taken it, so a consumer must not
	// wait on a call of its own while it stops taking items: use
	// [Conn.Go] and take the answer from the sequence, or make the call
	// with the callback's ctx.
	InOrder InOrderFunc
}

// Conn is a JSON-RPC 2.0 connection over newline-delimited JSON. It
// implements the Caller interface the generated typed peers need.
//
// All methods are safe for concurrent use.
type Conn struct {
	r       io.Reader
	w       io.Writer
	handler Handler
	ev      events
	tap     func(Direction, []byte)
	nullID  bool
	inOrder InOrderFunc

	// Marks of InOrder (Conn.Mark): readerIdle says the reader waits for
	// new bytes with every line received queued.
	markMu     sync.Mutex
	readerIdle bool
	readEnded  bool
	marks      []*Inbound

	lines *lineReader
	// lastMethod is the method name the reader last decoded (classify).
	lastMethod string
	inbox      inbox
	outq       chan outFrame

	baseCtx    context.Context
	cancelBase context.CancelFunc
	notifScope scope
	notifCtx   context.Context

	nextID atomic.Int64

	mu        sync.Mutex // guards life and the three tables
	life      lifecycle  // see lifecycle.go: every state a Conn can be in
	pending   map[int64]*pendingCall
	abandoned map[int64]struct{}
	inflight  map[string]*inflight

	writeErr   atomic.Pointer[ConnError]
	writerStop chan struct{}
	writerDone chan struct{}
	readerDone chan struct{}

	done      chan struct{} // closed on reaching phaseDone
	closeOnce sync.Once     // a second Close waits for the first
	closeErr  error
	wg        sync.WaitGroup // dispatcher, request goroutines, cancel senders

	// work hands a request to an idle request goroutine (see worker).
	work        chan *inflight
	idleWorkers atomic.Int32

	// notifReq is the Request every notification is handed in when
	// reuseNotifRequest is set: by a side whose own typed dispatch, which
	// never keeps the Request, is the handler.
	notifReq          Request
	reuseNotifRequest bool
}

// outFrame is one queued write: a complete line, or a flush marker.
type outFrame struct {
	data  []byte
	call  *pendingCall  // fails with the write error if this write fails
	flush chan struct{} // closed once everything before it is written
}

// scope marks a handler's context so that calls made from inside a handler
// can be recognised (see inbox).
type scope struct {
	conn         *Conn
	notification bool
	active       atomic.Bool
}

type scopeKey struct{}

var errConnClosed = &ConnError{Op: "close"}

// NewConn starts a connection reading r and writing w, with h handling
// inbound messages (nil answers every request with -32601 and ignores
// notifications). opts may be nil.
//
// Close closes r and w when they implement io.Closer; if r does not, the
// reader goroutine stays blocked in Read until r returns.
func NewConn(r io.Reader, w io.Writer, h Handler, opts *Options) *Conn {
	c := newConn(r, w, h, opts)
	c.run()
	return c
}

// newConn builds a Conn without starting it, so that a wrapper can finish
// wiring itself before the first message is handled.
func newConn(r io.Reader, w io.Writer, h Handler, opts *Options) *Conn {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxQueuedMessages <= 0 {
		o.MaxQueuedMessages = DefaultMaxQueuedMessages
	}
	if o.MaxQueuedBytes <= 0 {
		o.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if o.MaxBacklogBytes <= 0 {
		o.MaxBacklogBytes = DefaultMaxBacklogBytes
	}
	if o.WriteQueue <= 0 {
		o.WriteQueue = DefaultWriteQueue
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		r:          r,
		w:          w,
		handler:    h,
		ev:         events{obs: o.Observer, log: o.Logger},
		tap:        o.Tap,
		nullID:     o.NullIDIsNotification,
		inOrder:    o.InOrder,
		lines:      newLineReader(r, o.MaxLineBytes),
		outq:       make(chan outFrame, o.WriteQueue),
		pending:    make(map[int64]*pendingCall),
		abandoned:  make(map[int64]struct{}),
		inflight:   make(map[string]*inflight),
		writerStop: make(chan struct{}),
		writerDone: make(chan struct{}),
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		work:       make(chan *inflight),
	}
	c.inbox.init(o.MaxQueuedMessages, o.MaxQueuedBytes, o.MaxBacklogBytes)
	if c.inOrder != nil {
		c.lines = newLineReader(&markingReader{r: r, c: c}, o.MaxLineBytes)
	}
	c.baseCtx, c.cancelBase = context.WithCancel(context.Background())
	c.notifScope = scope{conn: c, notification: true}
	c.notifCtx = context.WithValue(c.baseCtx, scopeKey{}, &c.notifScope)
	return c
}

// run starts the reader, dispatcher and writer goroutines.
func (c *Conn) run() {
	c.wg.Add(1)
	go c.readLoop()
	go c.dispatchLoop()
	go c.writeLoop()
}

// Call sends a request and waits for its answer, decoding the result into
// result (a pointer; nil discards it; *json.RawMessage takes the raw bytes,
// a read-only slice of the line read, which strings decoded from the same
// result share). An error answer is returned as an *Error.
//
// If ctx ends first, Call sends $/cancel_request for the request and
// returns ctx's error; a late answer is dropped. To send the cancellation
// and still get the peer's final answer, use [Conn.Go] and
// [PendingCall.Cancel].
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	p, err := c.start(ctx, method, params)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.decode(result)
	case <-ctx.Done():
	}
	select {
	case <-p.done: // answered while ctx ended: the answer wins
		return p.decode(result)
	default:
	}
	p.cancelOnce.Do(func() { c.sendCancel(p.id) })
	c.abandon(p, ctx.Err())
	return ctx.Err()
}

// Go sends a request and returns a handle on its answer without waiting for
// it. ctx bounds only the send; the call stays outstanding until the peer
// answers or the connection ends, whatever happens to ctx.
func (c *Conn) Go(ctx context.Context, method string, params any) (*PendingCall, error) {
	p, err := c.start(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return &PendingCall{c: c, p: p}, nil
}

// frameCap is the initial capacity of an outgoing frame: most messages fit
// without growing the buffer.
const frameCap = 512

// start registers and queues a request.
func (c *Conn) start(ctx context.Context, method string, params any) (*pendingCall, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := c.nextID.Add(1)
	data, err := appendRequest(make([]byte, 0, frameCap), id, method, params)
	if err != nil {
		return nil, err
	}
	p := &pendingCall{id: id, method: method, done: make(chan struct{})}
	if s, _ := ctx.Value(scopeKey{}).(*scope); s != nil && s.conn == c && s.active.Load() {
		p.lifts, p.inHandler = true, s.notification
	}
	c.mu.Lock()
	if err := c.callsEnded(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = p
	c.mu.Unlock()
	if p.lifts {
		c.inbox.lift(1)
	}
	if err := c.send(ctx, outFrame{data: data, call: p}); err != nil {
		if c.take(id) != nil {
			p.err = err
			c.complete(p)
		}
		return nil, err
	}
	return p, nil
}

// Notify sends a notification. It returns once the message is queued for
// the writer (use [Conn.Flush] to wait until it is written); ctx bounds the
// wait for queue space.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := appendNotification(make([]byte, 0, frameCap), method, params)
	if err != nil {
		return err
	}
	return c.send(ctx, outFrame{data: data})
}

// WriteRaw queues line, followed by a newline, exactly as given: no
// validation and no framing check. It exists for tests and conformance
// tools that must send malformed input on purpose.
func (c *Conn) WriteRaw(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data := append(append(make([]byte, 0, len(line)+1), line...), '\n')
	return c.send(ctx, outFrame{data: data})
}

// Flush waits until every message queued before it has been written to the
// underlying writer, or ctx ends.
func (c *Conn) Flush(ctx context.Context) error {
	f := outFrame{flush: make(chan struct{})}
	if err := c.send(ctx, f); err != nil {
		return err
	}
	select {
	case <-f.flush:
		if err := c.writeErr.Load(); err != nil {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.writerDone:
		return errConnClosed
	}
}

// Done is closed when the connection has ended: Close was called, or the
// inbound stream ended and every message read before the end was
// dispatched (every notification handler returned, every request handler
// started). Request handlers' contexts are cancelled then. A notification
// handler that blocks delays Done until it returns or Close cancels it.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (a *ConnError), or nil while it runs.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.finalErr()
	default:
		return nil
	}
}

// Close ends the connection: pending calls fail with an error matching
// ErrClosed, handlers' contexts are cancelled, the reader and writer are
// closed when they implement io.Closer, and Close waits for the
// connection's goroutines, including running handlers, to return. Messages
// still queued for writing are dropped; call Flush first to keep them.
// Close returns errors from closing the streams, ignoring "already closed".
// Close must not be called from a handler (it would wait for itself).
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.startClose()
		c.endCalls(errConnClosed)
		c.cancelBase()
		for _, p := range c.inbox.stop() {
			c.complete(p)
		}
		close(c.writerStop)
		var errs []error
		wc, wok := c.w.(io.Closer)
		rc, rok := c.r.(io.Closer)
		if wok {
			errs = append(errs, closeQuietly(wc))
		}
		if rok && !(wok && sameCloser(rc, wc)) {
			errs = append(errs, closeQuietly(rc))
		}
		c.wg.Wait()
		// A stream that cannot be closed cannot be interrupted either: a
		// read or write blocked on it ends when the stream returns, and
		// Close does not wait for it.
		if wok {
			<-c.writerDone
		}
		if rok {
			<-c.readerDone
		}
		c.finish(errConnClosed)
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

func sameCloser(a, b io.Closer) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

func closeQuietly(c io.Closer) error {
	err := c.Close()
	if errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// endCalls makes every outstanding call fail with err (future ones fail
// with the lifecycle's callErr); answers already read but deferred behind
// notifications are not touched.
func (c *Conn) endCalls(err error) {
	c.mu.Lock()
	pend := c.pending
	c.pending = make(map[int64]*pendingCall)
	clear(c.abandoned)
	c.mu.Unlock()
	for _, p := range pend {
		p.err = err
		c.complete(p)
	}
}

// endRead handles the end of the inbound stream. New calls fail at once.
// Calls still waiting fail only once the messages read before the end have
// been dispatched (in dispatchLoop), so a caller learns of the end after
// the notifications that preceded it, as it would of an answer; the
// exception is a call made from inside the running notification handler,
// which fails now, since the dispatch waits on it.
func (c *Conn) endRead(err error) {
	var now []*pendingCall
	c.mu.Lock()
	c.endReadLocked(err)
	for id, p := range c.pending {
		if p.inHandler {
			delete(c.pending, id)
			now = append(now, p)
		}
	}
	c.mu.Unlock()
	for _, p := range now {
		p.err = err
		c.complete(p)
	}
	c.inbox.end()
}

// take removes a call from the pending table; the taker owns completing it.
func (c *Conn) take(id int64) *pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p != nil {
		delete(c.pending, id)
	}
	return p
}

// abandon gives up on a call whose caller stopped waiting; a late answer is
// then dropped quietly rather than reported as unmatched.
func (c *Conn) abandon(p *pendingCall, err error) {
	c.mu.Lock()
	_, ok := c.pending[p.id]
	if ok {
		delete(c.pending, p.id)
		if c.callsEnded() == nil {
			c.abandoned[p.id] = struct{}{}
		}
	}
	c.mu.Unlock()
	if ok {
		p.err = err
		c.complete(p)
	}
}

// complete hands a call its outcome (already stored in p).
func (c *Conn) complete(p *pendingCall) {
	if p.lifts {
		c.inbox.lift(-1)
	}
	close(p.done)
}

// send queues a frame for the writer.
func (c *Conn) send(ctx context.Context, f outFrame) error {
	if err := c.writeErr.Load(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.writerStop:
		return errConnClosed
	default:
	}
	select {
	case c.outq <- f:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.writerStop:
		return errConnClosed
	}
}

// sendCancel queues $/cancel_request for one of our calls without making
// the caller wait for queue space.
func (c *Conn) sendCancel(id int64) {
	data, err := appendNotification(nil, MethodCancelRequest, cancelParams{RequestID: id})
	if err != nil {
		return
	}
	select {
	case c.outq <- outFrame{data: data}:
		return
	case <-c.writerStop:
		return
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.life.phase >= phaseClosing {
		return // Close has started waiting on wg
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.send(c.baseCtx, outFrame{data: data})
	}()
}

type cancelParams struct {
	RequestID int64 `json:"requestId"`
}

type inboundCancelParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// readLoop reads lines, answers bad ones, routes responses to their calls
// and queues requests and notifications for the dispatcher.
func (c *Conn) readLoop() {
	defer close(c.readerDone)
	for {
		line, err := c.lines.next()
		if c.isClosing() {
			return
		}
		if err != nil {
			if over, ok := errors.AsType[*OversizeError](err); ok {
				c.ev.oversize(over)
				if !c.queueInOrder(&Inbound{Kind: InboundOversize, Oversize: over}, nil, 0) {
					return
				}
				continue
			}
			c.endMarks()
			c.endRead(&ConnError{Op: "read", Err: err})
			return
		}
		if c.tap != nil {
			c.tap(DirectionIn, line)
		}
		if !c.handleLine(line) {
			return
		}
	}
}

// handleLine processes one line; it reports false once the connection is
// closing.
func (c *Conn) handleLine(line []byte) bool {
	m := classify(line, c.nullID, &c.lastMethod)
	switch m.kind {
	case kindResponse:
		return c.handleResponse(&m, len(line))
	case kindNotification:
		if m.refused != refuseNone {
			c.ev.notificationFailed(m.method, m.refused.err())
			return true
		}
		if m.method == MethodCancelRequest {
			c.cancelInbound(m.params)
			return true
		}
		return c.inbox.push(inItem{msg: m, size: len(line)})
	case kindRequest:
		f := c.track(&m, len(line))
		if f == nil {
			c.ev.invalid(line, "duplicate request id")
			c.answerInvalid(m.id, &Error{Code: CodeInvalidRequest, Message: ErrInvalidRequest.Message + ": duplicate request id"})
			return true
		}
		if c.inOrder != nil {
			return c.inbox.push(inItem{msg: m, size: len(line), req: f})
		}
		return c.pushRequest(inItem{msg: m, size: len(line), req: f})
	default:
		var e *Error
		switch m.code {
		case CodeParseError:
			c.ev.unparsable(line)
			e = &Error{Code: CodeParseError, Message: ErrParse.Message}
		case CodeInvalidParams:
			// Answered as the typed dispatch answers params it cannot
			// decode; the request was well formed, so it is not an
			// invalid message.
			e = &Error{Code: CodeInvalidParams, Message: m.why, Data: json.RawMessage(`{"path":"params"}`)}
		default:
			c.ev.invalid(line, m.why)
			e = &Error{Code: m.code, Message: ErrInvalidRequest.Message + ": " + m.why}
		}
		if !c.queueInOrder(&Inbound{Kind: InboundBadLine, Line: line, Reason: m.why}, nil, len(line)) {
			return false
		}
		if !m.silent {
			c.answerInvalid(m.id, e)
		}
	}
	return true
}

// answerInvalid answers a line the handler never sees.
func (c *Conn) answerInvalid(id json.RawMessage, e *Error) {
	_ = c.send(c.baseCtx, outFrame{data: appendError(nil, id, e)})
}

// track registers an inbound request's state under its id; it returns
// nil when a request with the same id is still in flight (JSON-RPC ids
// must be unique among the requests a peer has outstanding). A null id
// names no request, so it is neither registered nor a duplicate.
func (c *Conn) track(m *inMsg, size int) *inflight {
	f := &inflight{size: size}
	f.req = Request{Method: m.method, Params: m.params, ID: m.id}
	if isNull(m.id) {
		return f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.inflight[string(m.id)]; dup {
		return nil
	}
	c.inflight[string(m.id)] = f
	return f
}

// handleResponse routes a response to its call; it reports false once the
// connection is closing.
func (c *Conn) handleResponse(m *inMsg, size int) bool {
	id, ok := parseOutgoingID(m.id)
	var p *pendingCall
	if ok {
		c.mu.Lock()
		p = c.pending[id]
		if p != nil {
			delete(c.pending, id)
		} else if _, gone := c.abandoned[id]; gone {
			delete(c.abandoned, id)
			c.mu.Unlock()
			return true
		}
		c.mu.Unlock()
	}
	if p == nil {
		c.ev.unmatched(m.id)
		return c.queueInOrder(&Inbound{Kind: InboundResponse, ID: m.id}, nil, size)
	}
	switch {
	case m.refused != refuseNone:
		p.err = m.refused.err()
	case m.errObj != nil:
		e, err := decodeErrorObject(m.errObj)
		if err != nil {
			p.err = err
		} else {
			p.err = e
		}
	default:
		p.result = m.result
	}
	if c.inOrder != nil {
		return c.queueResponse(p, size)
	}
	if c.inbox.answered(p) {
		c.complete(p)
	}
	return true
}

func (c *Conn) cancelInbound(params json.RawMessage) {
	var cp inboundCancelParams
	if params == nil || json.Unmarshal(params, &cp) != nil || cp.RequestID == nil {
		c.ev.notificationFailed(MethodCancelRequest, fmt.Errorf("%w: missing requestId", ErrInvalidParams))
		return
	}
	c.mu.Lock()
	f := c.inflight[string(cp.RequestID)]
	c.mu.Unlock()
	if f != nil {
		f.cancelNow()
	}
}

// dispatchLoop runs notification handlers in arrival order and starts
// request handlers in arrival order (each on a request goroutine of its
// own, see worker).
func (c *Conn) dispatchLoop() {
	for {
		it, ok := c.inbox.pop()
		if !ok {
			break
		}
		if c.inOrder != nil {
			c.dispatchInOrder(&it)
			continue
		}
		if it.msg.kind == kindNotification {
			c.runNotification(&it)
			for _, p := range c.inbox.notificationHandled(it.size) {
				c.complete(p)
			}
			continue
		}
		c.wg.Add(1)
		c.startWorker(it.req)
	}
	// Every message read before the stream ended has been dispatched.
	err := c.drainedErr()
	if c.inOrder != nil {
		c.deliverInOrder(&Inbound{Kind: InboundEnd, Err: err})
	}
	c.endCalls(err)
	c.finish(err)
	c.wg.Done()
}

func (c *Conn) runNotification(it *inItem) {
	var req *Request
	if c.reuseNotifRequest {
		req = &c.notifReq
		*req = Request{Method: it.msg.method, Params: it.msg.params}
	} else {
		req = &Request{Method: it.msg.method, Params: it.msg.params}
	}
	c.notifScope.active.Store(true)
	_, err := c.invoke(c.notifCtx, req)
	c.notifScope.active.Store(false)
	switch {
	case err == nil:
	case errors.Is(err, ErrMethodNotFound):
		c.ev.unhandled(req.Method)
	default:
		c.ev.notificationFailed(req.Method, err)
	}
}

// invoke calls the handler, turning a panic into an internal error so one
// bad handler cannot take the connection down.
func (c *Conn) invoke(ctx context.Context, req *Request) (result any, err error) {
	if c.handler == nil {
		return nil, ErrMethodNotFound
	}
	defer func() {
		if r := recover(); r != nil {
			c.ev.log.Error("handler panicked", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf("handler panicked: %v", r)}
		}
	}()
	return c.handler.Handle(ctx, req)
}

// wireError maps a handler error to the error sent to the peer.
func wireError(ctx context.Context, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ErrRequestCancelled
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
