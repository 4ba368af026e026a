package acpsdk

import (
	"bufio"
	"sync"
)

// writeBufferSize batches small frames written back to back into one write.
const writeBufferSize = 64 << 10

// frames recycles the buffers outgoing messages are encoded into: the
// writer copies a frame into its own buffer, after which the frame's
// buffer is free. Two allocations of a request and its answer fewer. A
// buffer grown past maxRecycledFrame is left to the collector, so that
// one large message does not keep its memory in the pool.
var frames = sync.Pool{New: func() any {
	b := make([]byte, 0, frameCap)
	return &b
}}

const maxRecycledFrame = 16 << 10

// newFrame returns an empty buffer to encode an outgoing message into.
func newFrame() *[]byte {
	b := frames.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// recycle returns a written frame's buffer to frames. With a Tap set it
// does not: a Tap may keep the lines it sees.
func (c *Conn) recycle(f *outFrame) {
	if f.buf == nil || c.tap != nil {
		return
	}
	if cap(f.data) <= maxRecycledFrame {
		*f.buf = f.data[:0] // keep what encoding grew it to
	}
	frames.Put(f.buf)
}

// writeLoop is the only goroutine that writes to the peer (SP-8). It takes
// frames in queue order, and flushes the buffer whenever the queue runs
// empty, so a burst costs few writes and a lone message is sent at once.
//
// After a write fails, the error is kept: frames still queued and every
// later send fail with it, and calls whose request was lost fail too. The
// reader is left running, since answers to earlier calls may still arrive.
func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	bw := bufio.NewWriterSize(c.w, writeBufferSize)
	var batch []*outgoingCall // calls whose request is in bw, not yet flushed
	fail := func(err error) {
		werr := &ConnError{Op: "write", Err: err}
		c.writeErr.CompareAndSwap(nil, werr)
		for _, p := range batch {
			c.failCall(p, c.writeErr.Load())
		}
		batch = batch[:0]
	}
	flush := func() {
		if c.writeErr.Load() != nil {
			return
		}
		if err := bw.Flush(); err != nil {
			fail(err)
			return
		}
		clear(batch)
		batch = batch[:0]
	}
	write := func(f outFrame) {
		if f.flush != nil {
			flush()
			close(f.flush)
			return
		}
		if werr := c.writeErr.Load(); werr != nil {
			if f.call != nil {
				c.failCall(f.call, werr)
			}
			return
		}
		if c.tap != nil {
			c.tap(DirectionOut, f.data[:len(f.data)-1])
		}
		if f.call != nil {
			batch = append(batch, f.call)
		}
		if _, err := bw.Write(f.data); err != nil {
			fail(err)
		}
		c.recycle(&f)
	}
	for {
		select {
		case f := <-c.outq:
			write(f)
			for more := true; more; {
				select {
				case f = <-c.outq:
					write(f)
				default:
					more = false
				}
			}
			flush()
		case <-c.writerStop:
			return
		}
	}
}

// failCall fails a call whose request could not be written, unless it was
// already answered or ended.
func (c *Conn) failCall(p *outgoingCall, err error) {
	if c.take(p.id) == p {
		p.err = err
		c.complete(p)
	}
}
