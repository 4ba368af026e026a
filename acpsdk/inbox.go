package acpsdk

import "sync"

// inItem is one inbound request or notification waiting for the dispatcher.
type inItem struct {
	msg  inMsg
	size int       // line length, for the byte bound
	req  *inflight // requests only: the cancel handle $/cancel_request uses
	// With Options.InOrder, a response or a bad or oversize line also
	// waits here, as event; call is a response's call, completed when the
	// dispatcher reaches it.
	event *Inbound
	call  *pendingCall
}

// inbox is the ordered, bounded queue between the reader and the dispatcher,
// and the one place the ordering rules live (SDK-7, SDK-9):
//
//   - Requests and notifications leave in arrival order.
//   - The bound counts messages queued plus requests still being handled,
//     so a slow handler of either kind eventually blocks the reader
//     (backpressure) instead of growing memory.
//   - The backlog, the bytes queued and not yet taken by the dispatcher,
//     has a bound of its own: how far the reader may run ahead of a busy
//     dispatcher. Small messages then queue by the hundred and large ones
//     by the few; that depth lets a reader held back sleep and wake (tens
//     of microseconds on a virtual machine) before the dispatcher runs dry.
//   - The bound is lifted while a handler waits on a call it made to the
//     peer: that call's response is behind the blocked reader, so keeping
//     the bound would deadlock.
//   - A response is deferred until every notification read before it has
//     been handled (its barrier), unless its call was made from inside the
//     running notification handler, which would otherwise wait on itself.
type inbox struct {
	mu sync.Mutex
	// notEmpty wakes the dispatcher, notFull the reader; each has one
	// waiter, and is signalled only when that waiter sleeps, so a busy
	// stream costs no wake-ups. The reader is woken once the queue has
	// drained to half the bound (or below), not for every message handled.
	notEmpty, notFull     sync.Cond
	popWaiting, pushWaits bool

	items []inItem
	head  int

	count, bytes       int // messages queued or being handled as requests
	maxCount, maxBytes int
	backlog            int // bytes queued, not yet popped
	maxBacklog         int
	lifted             int // handler-made calls outstanding
	ended              bool
	stopped            bool

	readNotifs    uint64 // notifications queued so far
	handledNotifs uint64 // notifications handled so far
	deferred      []deferredResponse
}

type deferredResponse struct {
	call    *pendingCall
	barrier uint64
}

func (q *inbox) init(maxCount, maxBytes, maxBacklog int) {
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	q.maxCount, q.maxBytes, q.maxBacklog = maxCount, maxBytes, maxBacklog
}

// full reports whether a message of size must wait. A message finds room
// when nothing is queued or being handled, and past the backlog's bound
// when nothing is queued, however large it is.
func (q *inbox) full(size int) bool {
	return !q.stopped && q.lifted == 0 && q.count > 0 &&
		(q.count >= q.maxCount || q.bytes+size > q.maxBytes ||
			q.backlog > 0 && q.backlog+size > q.maxBacklog)
}

// wakeReader wakes a waiting reader once the queue is at or below half of
// each bound (hysteresis), or empty.
func (q *inbox) wakeReader() {
	if q.pushWaits && (q.count == 0 ||
		q.count <= q.maxCount/2 && q.bytes <= q.maxBytes/2 && q.backlog <= q.maxBacklog/2) {
		q.notFull.Signal()
	}
}

// push queues a message, waiting while the bound is reached. It reports
// false once the inbox is stopped.
func (q *inbox) push(it inItem) bool {
	ok, _ := q.pushOrAdmit(it, nil)
	return ok
}

// pushOrAdmit is push, except that when admit is set and the dispatcher
// waits on an empty queue, the message is admitted without being queued:
// it counts against the bound as a request being handled does, admit runs
// (under the inbox's lock, while the dispatcher is known to be alive), and
// admitted says the caller must start it.
func (q *inbox) pushOrAdmit(it inItem, admit func()) (ok, admitted bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.full(it.size) {
		q.pushWaits = true
		q.notFull.Wait()
		q.pushWaits = false
	}
	if q.stopped {
		return false, false
	}
	q.count++
	q.bytes += it.size
	if admit != nil && q.popWaiting && q.head == len(q.items) {
		admit()
		return true, true
	}
	q.items = append(q.items, it)
	q.backlog += it.size
	if it.msg.kind == kindNotification {
		q.readNotifs++
	}
	if q.popWaiting {
		q.notEmpty.Signal()
	}
	return true, false
}

// pushNow queues an item without waiting for room (a mark of
// Options.InOrder, which must never block its caller); it is dropped once
// the inbox is stopped.
func (q *inbox) pushNow(it inItem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.items = append(q.items, it)
	q.count++
	if q.popWaiting {
		q.notEmpty.Signal()
	}
}

// pop takes the next message in arrival order. It reports false when the
// inbox is stopped, or ended and empty.
func (q *inbox) pop() (inItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.ended && !q.stopped {
		q.popWaiting = true
		q.notEmpty.Wait()
		q.popWaiting = false
	}
	if q.stopped || q.head == len(q.items) {
		return inItem{}, false
	}
	it := q.items[q.head]
	q.items[q.head] = inItem{} // let the line be collected once handled
	q.head++
	q.backlog -= it.size
	// A request taken here may run for long before it releases its share
	// of the bound: a reader held back by the backlog must not wait for it.
	q.wakeReader()
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head >= 1024 && q.head*2 >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return it, true
}

// release frees the bound held by a message once it is handled.
func (q *inbox) release(size int) {
	q.mu.Lock()
	q.count--
	q.bytes -= size
	q.wakeReader()
	q.mu.Unlock()
}

// notificationHandled releases a handled notification's bound and returns
// the deferred responses that may now be delivered.
func (q *inbox) notificationHandled(size int) []*pendingCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.count--
	q.bytes -= size
	q.handledNotifs++
	q.wakeReader()
	return q.takeReady()
}

func (q *inbox) takeReady() []*pendingCall {
	n := 0
	for n < len(q.deferred) && q.deferred[n].barrier <= q.handledNotifs {
		n++
	}
	if n == 0 {
		return nil
	}
	ready := make([]*pendingCall, n)
	for i := range n {
		ready[i] = q.deferred[i].call
	}
	rest := copy(q.deferred, q.deferred[n:])
	clear(q.deferred[rest:])
	q.deferred = q.deferred[:rest]
	return ready
}

// answered reports whether a call's response may be delivered now; if not,
// it is deferred until the notifications read before it are handled. Once
// the inbox is stopped nothing waits any more, and stop has already handed
// out the deferred calls, so the answer is delivered now.
func (q *inbox) answered(p *pendingCall) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped || p.inHandler || (len(q.deferred) == 0 && q.handledNotifs >= q.readNotifs) {
		return true
	}
	q.deferred = append(q.deferred, deferredResponse{call: p, barrier: q.readNotifs})
	return false
}

// lift adds delta to the number of outstanding handler-made calls.
func (q *inbox) lift(delta int) {
	q.mu.Lock()
	q.lifted += delta
	if q.lifted > 0 && q.pushWaits {
		q.notFull.Signal()
	}
	q.mu.Unlock()
}

// end marks that no more messages will be pushed; pop drains what is queued.
func (q *inbox) end() {
	q.mu.Lock()
	q.ended = true
	q.notEmpty.Broadcast()
	q.mu.Unlock()
}

// stop wakes every waiter, drops what is queued and returns the deferred
// and queued responses so their callers still get the answers that arrived.
func (q *inbox) stop() []*pendingCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
	ready := make([]*pendingCall, 0, len(q.deferred))
	for _, d := range q.deferred {
		ready = append(ready, d.call)
	}
	for _, it := range q.items[q.head:] {
		if it.call != nil {
			ready = append(ready, it.call)
		}
	}
	clear(q.items)
	q.items, q.head, q.backlog = nil, 0, 0
	q.deferred = nil
	return ready
}
