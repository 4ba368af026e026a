package acpsdk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// consumer reads the sequence of items the connection reads: a [Handler]
// (handled, below) or an [OrderedFunc] (ordered, in ordered.go). The
// dispatcher goroutine gives it every item in read order, then the end.
type consumer interface {
	// take does what the item asks, on the dispatcher goroutine; done
	// says it is done with the item, whose share of the bound the
	// dispatcher then releases (a request's is released when it is
	// answered). Items are passed by value: a pointer through an interface
	// would cost an allocation each.
	take(c *Conn, it item) (done bool)
	// quick reports whether the reader may take an item of kind k itself
	// when it finds nothing queued before it (see inbox.push): when taking
	// it never blocks. An item taken that way holds no share of the
	// bound, a request aside.
	quick(k InboundKind) bool
	// takeNow is take on the reader, for an item quick admitted.
	takeNow(c *Conn, it item)
	// end is the end of the sequence: every item read before it was
	// taken, and err says why the connection ended.
	end(c *Conn, err error)
}

// dispatchLoop gives every item, in read order, to the consumer, then the
// end; the connection is done once the consumer has taken it.
func (c *Conn) dispatchLoop() {
	// The item taken last, if its share of the bound is to be released:
	// the pop that follows releases it under the same lock (a release of
	// its own took the lock once more per item).
	done, size := false, 0
	for {
		it, ok := c.inbox.pop(done, size)
		if !ok {
			break
		}
		done, size = c.consumer.take(c, it), it.size
	}
	// Every item read before the stream ended has been taken.
	err := c.drainedErr()
	c.consumer.end(c, err)
	c.endCalls(err)
	c.finish(err)
	c.wg.Done()
}

// handled is the consumer of a Conn with a Handler: a notification is
// handled on the dispatcher, so notifications are handled one at a time in
// read order; a request is started on a request goroutine of its own, so a
// request that waits never holds up the items behind it; a response
// completes its call.
type handled struct {
	h Handler
	// notif is the Request every notification is handed in when reuse is
	// set: by a side whose own typed dispatch, which never keeps the
	// Request, is the handler.
	notif Request
	reuse bool
}

func (d *handled) take(c *Conn, it item) bool {
	switch it.kind {
	case InboundNotification:
		d.notification(c, &it)
	case InboundRequest:
		c.wg.Add(1)
		c.startWorker(d, it.req)
		return false // the request holds its share until answered
	case InboundResponse:
		if it.call != nil && !it.answered {
			c.complete(it.call)
		}
	}
	return true
}

// quick: everything but a notification is taken at once, and a handler
// never runs on the reader (it may call the peer, whose answer the reader
// must be free to read).
func (d *handled) quick(k InboundKind) bool { return k != InboundNotification }

func (d *handled) takeNow(c *Conn, it item) {
	switch it.kind {
	case InboundRequest:
		c.startWorker(d, it.req) // push added it to c.wg
	case InboundResponse:
		if it.call != nil && !it.answered {
			c.complete(it.call)
		}
	}
}

func (d *handled) end(*Conn, error) {}

// notification runs a notification's handler and reports its failure.
func (d *handled) notification(c *Conn, it *item) {
	var req *Request
	if d.reuse {
		req = &d.notif
		*req = Request{Method: it.method, Params: it.params, validated: it.params}
	} else {
		req = &Request{Method: it.method, Params: it.params, validated: it.params}
	}
	c.notifScope.active.Store(true)
	_, err := d.invoke(c, c.notifCtx, req)
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
func (d *handled) invoke(c *Conn, ctx context.Context, req *Request) (result any, err error) {
	if d.h == nil {
		return nil, ErrMethodNotFound
	}
	defer func() {
		if r := recover(); r != nil {
			c.ev.log.Error("handler panicked", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf("handler panicked: %v", r)}
		}
	}()
	return d.h.Handle(ctx, req)
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
