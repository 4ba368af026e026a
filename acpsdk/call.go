package acpsdk

import (
	"context"
	"fmt"
	"sync"

	"github.com/segmentio/encoding/json"
)

// outgoingCall is a request of ours waiting for its answer. Its outcome
// fields are written once, before done is closed, by whoever took it out of
// the Conn's outgoing table.
type outgoingCall struct {
	id     int64
	method string
	done   chan struct{}
	result json.RawMessage
	err    error
	// lifts: made from inside a handler of this conn, so the inbound bound
	// is lifted while it is outstanding. inConsumer: made from inside the
	// running notification handler or OrderedFunc, so its answer completes
	// it when read, ahead of the items queued before it (the consumer would
	// otherwise wait on itself).
	lifts, inConsumer bool
	cancelOnce        sync.Once
}

func (p *outgoingCall) decode(into any) error {
	if p.err != nil {
		return p.err
	}
	switch v := into.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*v = p.result
		return nil
	}
	// The line was validated as a whole when it was read, so a typed
	// result is not validated again (one pass); null keeps
	// json.Unmarshal's handling.
	if ok, err := decodeTrustedResult(p.result, into); ok {
		if err != nil {
			return fmt.Errorf("acpsdk: decoding %s result: %w", p.method, err)
		}
		return nil
	}
	if err := json.Unmarshal(p.result, into); err != nil {
		return fmt.Errorf("acpsdk: decoding %s result: %w", p.method, err)
	}
	return nil
}

// PendingCall is an outgoing request whose answer may still be coming; see
// [Conn.Go]. It always completes: with the peer's answer, or with an error
// when the request could not be written or the connection ends.
type PendingCall struct {
	c *Conn
	p *outgoingCall
}

// ID returns the request's id on the wire.
func (pc *PendingCall) ID() int64 { return pc.p.id }

// Method returns the request's method.
func (pc *PendingCall) Method() string { return pc.p.method }

// Done is closed once the outcome is known.
func (pc *PendingCall) Done() <-chan struct{} { return pc.p.done }

// Result waits for the outcome and decodes the result into into (see
// [Conn.Call] for the accepted forms). An error answer is an *Error.
func (pc *PendingCall) Result(into any) error {
	<-pc.p.done
	return pc.p.decode(into)
}

// Wait is Result bounded by ctx: if ctx ends first it returns ctx's error
// and the call stays outstanding.
func (pc *PendingCall) Wait(ctx context.Context, into any) error {
	select {
	case <-pc.p.done:
		return pc.p.decode(into)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel asks the peer to abandon the request by sending $/cancel_request
// (once, however often Cancel is called). The call stays outstanding: the
// peer still answers, with a result or an error such as -32800.
func (pc *PendingCall) Cancel() {
	pc.p.cancelOnce.Do(func() { pc.c.sendCancel(pc.p.id) })
}
