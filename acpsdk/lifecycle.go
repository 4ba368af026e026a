package acpsdk

import "sync/atomic"

// A Conn's life, in one place. Every field here is guarded by Conn.mu
// (closing is also read without it) and changed only by the named
// transitions below; the phase only moves forward:
//
//	running ──endRead──▶ draining ──finish──▶ done
//	   │                    │                  ▲
//	   └─────startClose─────┴──▶ closing ──finish──┘
//
//   - running: lines are read and dispatched; calls may be made.
//   - draining: the inbound stream ended (EOF or a read error). New calls
//     fail at once with the read error; messages read before the end are
//     still dispatched, and the calls waiting for an answer fail once they
//     are (dispatchLoop then finishes).
//   - closing: Close was called. Calls fail with ErrClosed, handlers'
//     contexts are cancelled, the streams are closed and Close waits for
//     the connection's goroutines.
//   - done: Done is closed and Err says why.
//
// The writer's sticky error (Conn.writeErr) is not part of it: a failed
// write ends no phase, since answers to earlier calls may still be read.

// phase is where a Conn is in its life.
type phase uint8

const (
	phaseRunning phase = iota
	phaseDraining
	phaseClosing
	phaseDone
)

// lifecycle is a Conn's shutdown state.
type lifecycle struct {
	phase phase
	// callErr is what calls made from now on fail with; nil while running.
	callErr error
	// err is what Err reports, set on reaching done.
	err error
	// closing mirrors phase >= phaseClosing for the reader, which asks
	// after every line and should not take Conn.mu for it.
	closing atomic.Bool
}

// callsEnded returns the error a new call fails with, or nil while calls
// may be made. c.mu must be held.
func (c *Conn) callsEnded() error { return c.life.callErr }

// endReadLocked moves running to draining: the inbound stream ended with
// err. It reports whether the phase moved (not when Close came first).
// c.mu must be held.
func (c *Conn) endReadLocked(err error) bool {
	if c.life.phase != phaseRunning {
		return false
	}
	c.life.phase, c.life.callErr = phaseDraining, err
	return true
}

// startClose moves running or draining to closing (Close runs it once).
func (c *Conn) startClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.life.phase < phaseClosing {
		c.life.phase, c.life.callErr = phaseClosing, errConnClosed
		c.life.closing.Store(true)
	}
}

// isClosing reports whether Close has started (or the connection is done).
func (c *Conn) isClosing() bool { return c.life.closing.Load() }

// drainedErr is why the connection ends once every message read has been
// dispatched: the read error, or ErrClosed when Close came first.
func (c *Conn) drainedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.life.phase >= phaseClosing || c.life.callErr == nil {
		return errConnClosed
	}
	return c.life.callErr
}

// finish moves any phase to done, once: it records err for Err, cancels
// the handlers' contexts and wakes Done.
func (c *Conn) finish(err error) {
	c.mu.Lock()
	if c.life.phase == phaseDone {
		c.mu.Unlock()
		return
	}
	c.life.phase, c.life.err = phaseDone, err
	c.life.closing.Store(true)
	if c.life.callErr == nil {
		c.life.callErr = err
	}
	c.mu.Unlock()
	c.cancelBase()
	close(c.done)
}

// finalErr is what Err reports once done.
func (c *Conn) finalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.life.err
}
