package acpsdk

import (
	"sync"
	"sync/atomic"

	"github.com/segmentio/encoding/json"
)

// item is one thing read from the peer, in the one sequence every item
// read enters: a notification, a request, a response, a line that is not
// a message, an oversize line, or a mark (the end closes the sequence).
// Only the fields of its kind are set.
type item struct {
	kind InboundKind
	size int // line length, for the bounds; 0 for a mark
	// A notification's method and params; a request's are in req.
	method string
	params json.RawMessage
	// req is a request's state, in the incoming table from the moment it
	// was read, so $/cancel_request reaches it while it waits here.
	req *incomingRequest
	// call is the call of ours a response answers, its outcome set; nil
	// for a response that matches none (id says which it named).
	// answered says the call has been completed already: it was made
	// from inside the running consumer, which would otherwise wait on
	// itself.
	call     *outgoingCall
	answered bool
	id       json.RawMessage
	// A bad line and what is wrong with it; a skipped oversize line.
	line     []byte
	reason   string
	oversize *OversizeError
	mark     any
}

// inbox is the ordered, bounded queue between the reader and the
// dispatcher, the one place the rules of the sequence live (SDK-7, SDK-9):
//
//   - Items leave in read order, so whatever a consumer does with an item
//     comes after what it did with every item read before it. A response
//     completes its call when it is taken: after the notifications read
//     before it were handled.
//   - An item holds its share of the bound from the moment it is queued
//     until its consumer is done with it (a request: until it is answered),
//     so a slow consumer eventually blocks the reader (backpressure)
//     instead of growing memory. A response to one of our calls never
//     waits for room: their number is bounded by our own calls, and the
//     caller may be what frees the room.
//   - The backlog, the bytes queued and not yet taken by the dispatcher,
//     has a bound of its own: how far the reader may run ahead of a busy
//     dispatcher. Small messages then queue by the hundred and large ones
//     by the few; that depth lets a reader held back sleep and wake (tens
//     of microseconds on a virtual machine) before the dispatcher runs dry.
//   - The bound is lifted while a handler waits on a call it made to the
//     peer: that call's response is behind the blocked reader, so keeping
//     the bound would deadlock.
//   - An item that finds the dispatcher waiting on an empty queue may be
//     admitted instead of queued (push's quick): nothing read before it is
//     still to be taken, so the reader can take it itself, in order, and
//     save the dispatcher's wake-up.
//   - A notification may be queued without waking the dispatcher (push's
//     held): the reader wakes it once, with flush, before it does anything
//     that may wait (reading the stream, waiting for room, anything but
//     queueing another notification). One read of the stream holds many
//     lines, and waking the dispatcher for each cost more than decoding it
//     (issue #23: a futex wake per line on two cores); woken once per
//     read, it takes them all, and the reader never waits with one held.
type inbox struct {
	mu sync.Mutex
	// notEmpty wakes the dispatcher, notFull the reader; each has one
	// waiter, and is signalled only when that waiter sleeps, once (the
	// flag is cleared with the signal), so a busy stream costs no
	// wake-ups. The reader is woken once the queue has drained to half the
	// bound (or below), not for every item taken.
	notEmpty, notFull     sync.Cond
	popWaiting, pushWaits bool
	// held says items were queued while the dispatcher waited, and it
	// has not been woken for them (see flush). It is set and cleared under
	// mu; only the reader sets it, so the reader may read it without mu
	// to skip a flush with nothing to do.
	held atomic.Bool

	items []item
	head  int

	count, bytes       int // items queued, or taken and not yet done
	maxCount, maxBytes int
	backlog            int // bytes queued, not yet popped
	maxBacklog         int
	lifted             int // handler-made calls outstanding
	ended              bool
	stopped            bool

	// workers counts the request goroutines an admitted request starts:
	// it is added to under the lock, while the dispatcher, which holds a
	// count of its own until it has seen the inbox stopped or drained, is
	// known to run.
	workers *sync.WaitGroup
}

func (q *inbox) init(maxCount, maxBytes, maxBacklog int, workers *sync.WaitGroup) {
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	q.maxCount, q.maxBytes, q.maxBacklog = maxCount, maxBytes, maxBacklog
	q.workers = workers
}

// full reports whether an item of size must wait. An item finds room when
// nothing is queued or being handled, and past the backlog's bound when
// nothing is queued, however large it is.
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
		q.pushWaits = false
		q.notFull.Signal()
	}
}

// push puts it in the sequence behind everything read before it, waiting
// while the bound is reached (a response to our call never waits). With
// quick, an item that finds the dispatcher waiting on an empty queue is
// admitted instead: admitted says the caller must take it now, itself. An
// admitted request counts against the bound as one being handled does,
// and its goroutine is added to q.workers. With held, a queued item does
// not wake the dispatcher: the caller must flush before it waits for
// anything. ok is false once the inbox is stopped.
func (q *inbox) push(it *item, quick, held bool) (ok, admitted bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if it.call == nil {
		for q.full(it.size) {
			// What is held must be taken for room to come.
			q.wakeDispatcher()
			q.pushWaits = true
			q.notFull.Wait()
		}
		q.pushWaits = false
	}
	if q.stopped {
		return false, false
	}
	if quick && q.popWaiting && q.head == len(q.items) {
		if it.kind == InboundRequest {
			q.count++
			q.bytes += it.size
			q.workers.Add(1)
		}
		return true, true
	}
	q.count++
	q.bytes += it.size
	q.items = append(q.items, *it)
	q.backlog += it.size
	if held && q.popWaiting {
		q.held.Store(true)
		return true, false
	}
	q.wakeDispatcher()
	return true, false
}

// flush wakes the dispatcher for the items held by push, if any.
func (q *inbox) flush() {
	if !q.held.Load() {
		return // the common case of a line that is not a notification
	}
	q.mu.Lock()
	if q.held.Load() {
		q.wakeDispatcher()
	}
	q.mu.Unlock()
}

// pushNow queues an item without waiting for room (a mark, which must
// never block its caller); it is dropped once the inbox is stopped.
func (q *inbox) pushNow(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.items = append(q.items, it)
	q.count++
	q.wakeDispatcher()
}

// wakeDispatcher wakes the dispatcher if it waits on an empty queue.
func (q *inbox) wakeDispatcher() {
	if q.held.Load() {
		q.held.Store(false)
	}
	if q.popWaiting {
		q.popWaiting = false
		q.notEmpty.Signal()
	}
}

// pop first releases, when done, the share of the bound of the item the
// dispatcher took last (of size bytes; see release), then takes the next
// item in read order. It reports false when the inbox is stopped, or ended
// and empty.
func (q *inbox) pop(done bool, size int) (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if done {
		q.count--
		q.bytes -= size
		q.wakeReader()
	}
	for q.head == len(q.items) && !q.ended && !q.stopped {
		q.popWaiting = true
		q.notEmpty.Wait()
	}
	q.popWaiting = false
	if q.stopped || q.head == len(q.items) {
		return item{}, false
	}
	it := q.items[q.head]
	q.items[q.head] = item{} // let the line be collected once handled
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

// release frees the share of the bound an item held once its consumer is
// done with it.
func (q *inbox) release(size int) {
	q.mu.Lock()
	q.count--
	q.bytes -= size
	q.wakeReader()
	q.mu.Unlock()
}

// lift adds delta to the number of outstanding handler-made calls.
func (q *inbox) lift(delta int) {
	q.mu.Lock()
	q.lifted += delta
	if q.lifted > 0 && q.pushWaits {
		q.pushWaits = false
		q.notFull.Signal()
	}
	q.mu.Unlock()
}

// end marks that no more items will be pushed; pop drains what is queued.
func (q *inbox) end() {
	q.mu.Lock()
	q.ended = true
	q.notEmpty.Broadcast()
	q.mu.Unlock()
}

// stop wakes every waiter, drops what is queued and returns the calls
// whose answers were queued and not yet taken, so their callers still get
// the answers that arrived.
func (q *inbox) stop() []*outgoingCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.notEmpty.Broadcast()
	q.notFull.Broadcast()
	var calls []*outgoingCall
	for _, it := range q.items[q.head:] {
		if it.call != nil && !it.answered {
			calls = append(calls, it.call)
		}
	}
	clear(q.items)
	q.items, q.head, q.backlog = nil, 0, 0
	return calls
}
