package acpsdk

import (
	"context"
	"sync"

	"github.com/segmentio/encoding/json"
)

// incomingRequest is a request of the peer's from the moment it is read
// until it is answered: cancellable by $/cancel_request from the start,
// and holding everything its handler needs (the Request, the scope marking
// its context), so that serving one request costs one allocation for its
// state. It is in the Conn's incoming table under its id meanwhile.
type incomingRequest struct {
	mu        sync.Mutex
	cancel    context.CancelFunc
	cancelled bool

	size  int // line length, for the inbound bound
	req   Request
	scope scope
	ctx   scopeCtx
}

func (f *incomingRequest) start(cancel context.CancelFunc) {
	f.mu.Lock()
	f.cancel = cancel
	if f.cancelled {
		cancel()
	}
	f.mu.Unlock()
}

func (f *incomingRequest) cancelNow() {
	f.mu.Lock()
	f.cancelled = true
	if f.cancel != nil {
		f.cancel()
	}
	f.mu.Unlock()
}

// scopeCtx is a request's context: its cancellable context, carrying its
// scope, as context.WithValue would but without another allocation.
// Contexts derived from it find the cancellable one through Value, as they
// would through a WithValue context, so they are cancelled with it at no
// extra cost.
type scopeCtx struct {
	context.Context
	s *scope
}

// Value returns the request's scope for scopeKey and defers to the
// cancellable context for any other key.
func (c *scopeCtx) Value(key any) any {
	if _, ok := key.(scopeKey); ok {
		return c.s
	}
	return c.Context.Value(key)
}

// startRequest begins serving a request: its context (cancelled by
// $/cancel_request through f, and carrying an active scope so calls the
// handler makes are recognised as its own) and the Request handed on.
// Both consumers start requests here: the handler one on a request
// goroutine (serveRequest), the ordered one with a Reply.
func (c *Conn) startRequest(f *incomingRequest) (context.Context, context.CancelFunc, *scope, *Request) {
	ctx, cancel := context.WithCancel(c.baseCtx)
	f.scope.conn = c
	f.scope.active.Store(true)
	f.ctx = scopeCtx{Context: ctx, s: &f.scope}
	f.start(cancel)
	return &f.ctx, cancel, &f.scope, &f.req
}

// serveRequest runs a request's handler and answers it.
func (c *Conn) serveRequest(h *handled, f *incomingRequest) {
	ctx, cancel, s, req := c.startRequest(f)
	result, err := h.invoke(c, ctx, req)
	s.active.Store(false)
	c.answerRequest(ctx, cancel, req, f, result, err)
}

// answerRequest encodes and queues a request's answer, then releases what
// the request held: its context, its place in the incoming table and its
// share of the inbound bound.
func (c *Conn) answerRequest(ctx context.Context, cancel context.CancelFunc, req *Request, f *incomingRequest, result any, err error) {
	var frame []byte
	var buf *[]byte
	if err == nil {
		buf = newFrame()
		if frame, err = appendResult(*buf, req.ID, result); err != nil {
			frames.Put(buf)
			buf = nil
		}
	}
	if err != nil {
		e := wireError(ctx, err)
		if e.Code == CodeMethodNotFound {
			c.ev.methodNotFound(req.Method, req.ID)
		}
		frame = appendError(nil, req.ID, e)
	}
	cancel()
	c.forgetIncoming(req.ID, f)
	_ = c.send(context.Background(), outFrame{data: frame, buf: buf})
	c.inbox.release(f.size)
}

// track registers an incoming request under its id; it returns nil when a
// request with the same id is still being served (JSON-RPC ids must be
// unique among the requests a peer has outstanding). A null id names no
// request, so it is neither registered nor a duplicate.
func (c *Conn) track(method string, params, id json.RawMessage, size int) *incomingRequest {
	f := &incomingRequest{size: size}
	f.req = Request{Method: method, Params: params, ID: id, validated: params}
	if isNull(id) {
		return f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.incoming[string(id)]; dup {
		return nil
	}
	c.incoming[string(id)] = f
	return f
}

// forgetIncoming drops an answered request from the incoming table unless
// a later request reused its id.
func (c *Conn) forgetIncoming(id json.RawMessage, f *incomingRequest) {
	c.mu.Lock()
	if c.incoming[string(id)] == f {
		delete(c.incoming, string(id))
	}
	c.mu.Unlock()
}

// maxIdleWorkers bounds the request goroutines kept waiting for the next
// request once theirs is answered. Reusing one saves creating a goroutine
// and growing its stack again for every request.
const maxIdleWorkers = 4

// startWorker serves f on an idle request goroutine, or a new one. The
// caller has added one to c.wg for it; an idle goroutine holds its own.
func (c *Conn) startWorker(h *handled, f *incomingRequest) {
	select {
	case c.work <- f:
		c.wg.Done()
	default:
		go c.worker(h, f)
	}
}

// worker serves f, then further requests handed to it while it waits,
// until more than maxIdleWorkers would be idle or the connection ends.
func (c *Conn) worker(h *handled, f *incomingRequest) {
	defer c.wg.Done()
	for {
		c.serveRequest(h, f)
		if c.idleWorkers.Add(1) > maxIdleWorkers {
			c.idleWorkers.Add(-1)
			return
		}
		select {
		case f = <-c.work:
			c.idleWorkers.Add(-1)
		case <-c.baseCtx.Done():
			c.idleWorkers.Add(-1)
			return
		}
	}
}
