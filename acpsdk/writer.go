package acpsdk

import "bufio"

// writeBufferSize batches small frames written back to back into one write.
const writeBufferSize = 64 << 10

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
	var batch []*pendingCall // calls whose request is in bw, not yet flushed
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
	}
	for {
		select {
		case f := <-c.outq:
			c.wmu.Lock()
			write(f)
			c.queued.Add(-1)
			for more := true; more; {
				select {
				case f = <-c.outq:
					write(f)
					c.queued.Add(-1)
				default:
					more = false
				}
			}
			flush()
			c.wmu.Unlock()
		case <-c.writerStop:
			return
		}
	}
}

// writeDirect writes f on the sender's goroutine when nothing is queued or
// being written, saving the hand-off to the writer goroutine and back: on a
// round trip that is two goroutine wake-ups of the few it has. done is
// false when f must be queued instead. Only senders whose ctx cannot end
// come here (a blocked write cannot honour a ctx), and only when w can be
// closed, so that Close still ends a write blocked on a stalled peer.
func (c *Conn) writeDirect(f outFrame) (done bool, err error) {
	if !c.direct || !c.wmu.TryLock() {
		return false, nil
	}
	defer c.wmu.Unlock()
	// Anything queued is older than f and must be written first; with
	// nothing queued and the lock held, the writer's buffer is empty.
	if c.queued.Load() != 0 {
		return false, nil
	}
	if werr := c.writeErr.Load(); werr != nil {
		return true, werr
	}
	select {
	case <-c.writerStop:
		return true, errConnClosed
	default:
	}
	if c.tap != nil {
		c.tap(DirectionOut, f.data[:len(f.data)-1])
	}
	if _, err := c.w.Write(f.data); err != nil {
		select {
		case <-c.writerStop:
			return true, errConnClosed // Close ended the write
		default:
		}
		c.writeErr.CompareAndSwap(nil, &ConnError{Op: "write", Err: err})
		return true, c.writeErr.Load()
	}
	return true, nil
}

// failCall fails a call whose request could not be written, unless it was
// already answered or ended.
func (c *Conn) failCall(p *pendingCall, err error) {
	if c.take(p.id) == p {
		p.err = err
		c.complete(p)
	}
}
