package acpsdk

import (
	"context"
	"sync"
)

// inflight is an inbound request from the moment it is read until it is
// answered: cancellable by $/cancel_request from the start, and holding
// everything its handler needs (the Request, the scope marking its
// context), so that serving one request costs one allocation for its state.
type inflight struct {
	mu        sync.Mutex
	cancel    context.CancelFunc
	cancelled bool

	size  int // line length, for the inbound bound
	req   Request
	scope scope
	ctx   scopeCtx
}

func (f *inflight) start(cancel context.CancelFunc) {
	f.mu.Lock()
	f.cancel = cancel
	if f.cancelled {
		cancel()
	}
	f.mu.Unlock()
}

func (f *inflight) cancelNow() {
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
// Both the concurrent and the in-order dispatch start requests here.
func (c *Conn) startRequest(f *inflight) (context.Context, context.CancelFunc, *scope, *Request) {
	ctx, cancel := context.WithCancel(c.baseCtx)
	f.scope.conn = c
	f.scope.active.Store(true)
	f.ctx = scopeCtx{Context: ctx, s: &f.scope}
	f.start(cancel)
	return &f.ctx, cancel, &f.scope, &f.req
}

// serveRequest runs a request's handler and answers it.
func (c *Conn) serveRequest(f *inflight) {
	ctx, cancel, s, req := c.startRequest(f)
	result, err := c.invoke(ctx, req)
	s.active.Store(false)
	c.answerRequest(ctx, cancel, req, f, f.size, result, err)
}

// maxIdleWorkers bounds the request goroutines kept waiting for the next
// request once theirs is answered. Reusing one saves creating a goroutine
// and growing its stack again for every request.
const maxIdleWorkers = 4

// startWorker serves f on an idle request goroutine, or a new one. The
// caller has added one to c.wg for it; an idle goroutine holds its own.
func (c *Conn) startWorker(f *inflight) {
	select {
	case c.work <- f:
		c.wg.Done()
	default:
		go c.worker(f)
	}
}

// worker serves f, then further requests handed to it while it waits,
// until more than maxIdleWorkers would be idle or the connection ends.
func (c *Conn) worker(f *inflight) {
	defer c.wg.Done()
	for {
		c.serveRequest(f)
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

// pushRequest hands a request read to the dispatcher, or, when the
// dispatcher waits on an empty queue, starts it from the reader: nothing
// read before it is still waiting to be dispatched, so the order holds
// (SDK-7), and a wake-up of the dispatcher is saved. It reports false once
// the inbox is stopped.
func (c *Conn) pushRequest(it inItem) bool {
	ok, admitted := c.inbox.pushOrAdmit(it, func() { c.wg.Add(1) })
	if admitted {
		c.startWorker(it.req)
	}
	return ok
}
