package acpsdk

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"
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

	// validated is Params as read, from a line the connection validated
	// (DecodeParams trusts Params while they are still these bytes).
	validated json.RawMessage
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
}

// Conn is a JSON-RPC 2.0 connection over newline-delimited JSON. It
// implements the Caller interface the generated typed peers need.
//
// All methods are safe for concurrent use.
type Conn struct {
	r        io.Reader
	w        io.Writer
	consumer consumer // what reads the sequence: handled or ordered
	ev       events
	tap      func(Direction, []byte)
	nullID   bool
	maxLine  int

	// Marks (Conn.Mark, ordered connections only): readerIdle says the
	// reader waits for new bytes with every line received queued; read
	// counts the bytes read from the stream; marks wait for their place;
	// pipe is the stream's descriptor when it can say what it holds.
	markMu     sync.Mutex
	readerIdle bool
	readEnded  bool
	read       int64
	marks      []pendingMark
	pipe       *markPipe

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

	mu   sync.Mutex // guards life and the three tables
	life lifecycle  // see lifecycle.go: every state a Conn can be in
	// outgoing holds our calls waiting for their answers, by id;
	// abandoned the ids of those whose callers stopped waiting, so a late
	// answer is dropped quietly. incoming holds the peer's requests being
	// served, by id exactly as sent.
	outgoing  map[int64]*outgoingCall
	abandoned map[int64]struct{}
	incoming  map[string]*incomingRequest

	writeErr   atomic.Pointer[ConnError]
	writerStop chan struct{}
	writerDone chan struct{}
	readerDone chan struct{}

	done      chan struct{} // closed on reaching phaseDone
	closeOnce sync.Once     // a second Close waits for the first
	closeErr  error
	wg        sync.WaitGroup // dispatcher, request goroutines, cancel senders

	// work hands a request to an idle request goroutine (see worker).
	work        chan *incomingRequest
	idleWorkers atomic.Int32
}

// outFrame is one queued write: a complete line, or a flush marker.
type outFrame struct {
	data []byte
	// buf, when set, is the recycled buffer data was encoded into: the
	// writer returns it to frames once data is written (see newFrame).
	buf   *[]byte
	call  *outgoingCall // fails with the write error if this write fails
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
// notifications). opts may be nil. [NewOrderedConn] is the same
// connection with one consumer of everything read instead of a Handler.
//
// Close closes r and w when they implement io.Closer; if r does not, the
// reader goroutine stays blocked in Read until r returns.
func NewConn(r io.Reader, w io.Writer, h Handler, opts *Options) *Conn {
	c := newConn(r, w, &handled{h: h}, opts)
	c.run()
	return c
}

// newConn builds a Conn whose sequence cn consumes, without starting it,
// so that a wrapper can finish wiring itself before the first message is
// handled.
func newConn(r io.Reader, w io.Writer, cn consumer, opts *Options) *Conn {
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
		consumer:   cn,
		ev:         events{obs: o.Observer, log: o.Logger},
		tap:        o.Tap,
		nullID:     o.NullIDIsNotification,
		maxLine:    o.MaxLineBytes,
		lines:      newLineReader(r, o.MaxLineBytes),
		outq:       make(chan outFrame, o.WriteQueue),
		outgoing:   make(map[int64]*outgoingCall),
		abandoned:  make(map[int64]struct{}),
		incoming:   make(map[string]*incomingRequest),
		writerStop: make(chan struct{}),
		writerDone: make(chan struct{}),
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		work:       make(chan *incomingRequest),
	}
	c.inbox.init(o.MaxQueuedMessages, o.MaxQueuedBytes, o.MaxBacklogBytes, &c.wg)
	c.baseCtx, c.cancelBase = context.WithCancel(context.Background())
	c.notifScope = scope{conn: c, notification: true}
	c.notifCtx = context.WithValue(c.baseCtx, scopeKey{}, &c.notifScope)
	return c
}

// run starts the reader, dispatcher and writer goroutines.
func (c *Conn) run() {
	c.lines.beforeRead = c.inbox.flush
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
	done := ctx.Done()
	if done == nil {
		// A ctx that never ends: a receive costs less than a select.
		<-p.done
		return p.decode(result)
	}
	select {
	case <-p.done:
		return p.decode(result)
	case <-done:
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
func (c *Conn) start(ctx context.Context, method string, params any) (*outgoingCall, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := c.nextID.Add(1)
	buf := newFrame()
	data, err := appendRequest(*buf, id, method, params)
	if err != nil {
		frames.Put(buf)
		return nil, err
	}
	p := &outgoingCall{id: id, method: method, done: make(chan struct{})}
	if s, _ := ctx.Value(scopeKey{}).(*scope); s != nil && s.conn == c && s.active.Load() {
		p.lifts, p.inConsumer = true, s.notification
	}
	c.mu.Lock()
	if err := c.callsEnded(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.outgoing[id] = p
	c.mu.Unlock()
	if p.lifts {
		c.inbox.lift(1)
	}
	if err := c.send(ctx, outFrame{data: data, buf: buf, call: p}); err != nil {
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
	buf := newFrame()
	data, err := appendNotification(*buf, method, params)
	if err != nil {
		frames.Put(buf)
		return err
	}
	return c.send(ctx, outFrame{data: data, buf: buf})
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
// with the lifecycle's callErr); answers already read and queued are not
// touched.
func (c *Conn) endCalls(err error) {
	c.mu.Lock()
	out := c.outgoing
	c.outgoing = make(map[int64]*outgoingCall)
	clear(c.abandoned)
	c.mu.Unlock()
	for _, p := range out {
		p.err = err
		c.complete(p)
	}
}

// endRead handles the end of the inbound stream. New calls fail at once.
// Calls still waiting fail only once the items read before the end have
// been taken (in dispatchLoop), so a caller learns of the end after the
// notifications that preceded it, as it would of an answer; the exception
// is a call made from inside the running consumer, which fails now, since
// the dispatcher waits on it.
func (c *Conn) endRead(err error) {
	var now []*outgoingCall
	c.mu.Lock()
	c.endReadLocked(err)
	for id, p := range c.outgoing {
		if p.inConsumer {
			delete(c.outgoing, id)
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

// take removes a call from the outgoing table; the taker owns completing
// it.
func (c *Conn) take(id int64) *outgoingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.outgoing[id]
	if p != nil {
		delete(c.outgoing, id)
	}
	return p
}

// abandon gives up on a call whose caller stopped waiting; a late answer is
// then dropped quietly rather than reported as unmatched.
func (c *Conn) abandon(p *outgoingCall, err error) {
	c.mu.Lock()
	_, ok := c.outgoing[p.id]
	if ok {
		delete(c.outgoing, p.id)
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
func (c *Conn) complete(p *outgoingCall) {
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
	// Room in the queue is the common case, and a one-case send costs
	// less than the select that waits.
	select {
	case c.outq <- f:
		return nil
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
