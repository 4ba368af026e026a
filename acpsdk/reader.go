package acpsdk

import (
	"errors"
	"fmt"

	"github.com/segmentio/encoding/json"
)

// The reader goroutine: every line read becomes one item of the sequence
// (inbox.go) that the connection's consumer takes in read order
// (dispatch.go, ordered.go). What must happen when a line is read, before
// anything queued ahead of it is taken, happens here: a bad line is
// answered (SDK-10), a request enters the incoming table so that
// $/cancel_request reaches it at once (SDK-8), and a response leaves the
// outgoing table.

type inboundCancelParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// readLoop reads lines and turns each into an item of the sequence, until
// the stream ends or the connection closes.
func (c *Conn) readLoop() {
	defer close(c.readerDone)
	_, ordered := c.consumer.(*ordered)
	for {
		line, err := c.lines.next()
		if c.isClosing() {
			return
		}
		if err != nil {
			if over, ok := errors.AsType[*OversizeError](err); ok {
				c.inbox.flush()
				c.ev.oversize(over)
				if !c.push(item{kind: InboundOversize, oversize: over}) {
					return
				}
				continue
			}
			if ordered {
				c.endMarks()
			}
			c.endRead(&ConnError{Op: "read", Err: err})
			return
		}
		if c.tap != nil {
			c.inbox.flush() // the tap is the program's, and may wait
			c.tap(DirectionIn, line)
		}
		if !c.readLine(line) {
			return
		}
	}
}

// push puts an item in the sequence, or takes it at once when the consumer
// allows it and nothing is queued before it. It reports false once the
// connection is closing.
func (c *Conn) push(it item) bool {
	return c.pushItem(it, false)
}

// pushHeld is push for a notification, which does not wake the dispatcher
// (see inbox.push): the reader flushes before it waits for anything else.
func (c *Conn) pushHeld(it item) bool {
	return c.pushItem(it, true)
}

func (c *Conn) pushItem(it item, held bool) bool {
	ok, admitted := c.inbox.push(&it, c.consumer.quick(it.kind), held)
	switch {
	case admitted:
		c.consumer.takeNow(c, it)
	case !ok && it.call != nil && !it.answered:
		// Close stopped the inbox after this call left the outgoing table
		// and before its answer was queued: neither endCalls nor stop saw
		// it, so it is completed here, with the answer that arrived.
		c.complete(it.call)
	}
	return ok
}

// readLine turns one line into an item; it reports false once the
// connection is closing.
func (c *Conn) readLine(line []byte) bool {
	m := classify(line, c.nullID, &c.lastMethod)
	if m.kind == kindNotification && m.refused == nil && m.method != MethodCancelRequest {
		// The stream's common case: queued, the dispatcher woken later.
		return c.pushHeld(item{kind: InboundNotification, size: len(line), method: m.method, params: m.params})
	}
	// Anything else may wait (an observer, an answer to write): what is
	// held is released first.
	c.inbox.flush()
	switch m.kind {
	case kindResponse:
		return c.readResponse(&m, len(line))
	case kindNotification:
		if m.refused != nil {
			c.ev.notificationFailed(m.method, m.refused)
			return c.push(item{kind: InboundBadLine, size: len(line), line: line, reason: m.refused.Error()})
		}
		// The connection's own (SDK-8): it acts when it reads it.
		c.cancelIncoming(m.params)
		return true
	case kindRequest:
		f := c.track(m.method, m.params, m.id, len(line))
		if f == nil {
			c.ev.invalid(line, "duplicate request id")
			c.answerInvalid(m.id, &Error{Code: CodeInvalidRequest, Message: ErrInvalidRequest.Message + ": duplicate request id"})
			return c.push(item{kind: InboundBadLine, size: len(line), line: line, reason: "duplicate request id"})
		}
		return c.push(item{kind: InboundRequest, size: len(line), req: f})
	}
	var e *Error
	switch m.code {
	case CodeParseError:
		c.ev.unparsable(line)
		e = &Error{Code: CodeParseError, Message: ErrParse.Message}
	case CodeInvalidParams:
		// Answered as the typed dispatch answers params it cannot decode;
		// the request was well formed, so it is not an invalid message.
		e = &Error{Code: CodeInvalidParams, Message: m.why, Data: json.RawMessage(`{"path":"params"}`)}
	default:
		c.ev.invalid(line, m.why)
		e = &Error{Code: m.code, Message: ErrInvalidRequest.Message + ": " + m.why}
	}
	if !m.silent {
		c.answerInvalid(m.id, e)
	}
	return c.push(item{kind: InboundBadLine, size: len(line), line: line, reason: m.why})
}

// answerInvalid answers a line the consumer is not asked to answer.
func (c *Conn) answerInvalid(id json.RawMessage, e *Error) {
	_ = c.send(c.baseCtx, outFrame{data: appendError(nil, id, e)})
}

// readResponse takes the call a response answers out of the outgoing
// table and sets its outcome; the response then enters the sequence, and
// the call completes when it is taken. A call made from inside the running
// consumer is completed now (the consumer waits on it) and its response
// still enters the sequence where it was read. It reports false once the
// connection is closing.
func (c *Conn) readResponse(m *inMsg, size int) bool {
	id, ok := parseOutgoingID(m.id)
	var p *outgoingCall
	if ok {
		c.mu.Lock()
		p = c.outgoing[id]
		if p != nil {
			delete(c.outgoing, id)
		} else if _, gone := c.abandoned[id]; gone {
			delete(c.abandoned, id)
			c.mu.Unlock()
			return true
		}
		c.mu.Unlock()
	}
	it := item{kind: InboundResponse, size: size, id: m.id, call: p}
	if p == nil {
		c.ev.unmatched(m.id)
		return c.push(it)
	}
	switch {
	case m.refused != nil:
		p.err = m.refused
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
	if p.inConsumer {
		c.complete(p)
		it.answered = true
	}
	return c.push(it)
}

// cancelIncoming cancels the request $/cancel_request names, if it is
// still being served.
func (c *Conn) cancelIncoming(params json.RawMessage) {
	var cp inboundCancelParams
	if params == nil || json.Unmarshal(params, &cp) != nil || cp.RequestID == nil {
		c.ev.notificationFailed(MethodCancelRequest, fmt.Errorf("%w: missing requestId", ErrInvalidParams))
		return
	}
	c.mu.Lock()
	f := c.incoming[string(cp.RequestID)]
	c.mu.Unlock()
	if f != nil {
		f.cancelNow()
	}
}
