package adapter

import (
	"context"
	"errors"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// StopSession ends the session through the fixed teardown order of §19,
// whatever state it is in, bounded by stop grace plus three drain bounds
// (TD-13). ctx's deadline shortens the grace window. It returns nil; a
// second call, or a call with the zero Session, does nothing.
func (a *Adapter) StopSession(ctx context.Context, sess Session) error {
	if s := sess.s; s != nil {
		s.teardown(ctx)
	}
	return nil
}

// teardown runs §19 once. Each step checks its own preconditions, so a
// session that never finished starting goes through the same order.
func (s *session) teardown(ctx context.Context) {
	s.stopOnce.Do(func() { s.runTeardown(ctx) })
}

func (s *session) runTeardown(ctx context.Context) {
	start := time.Now()
	deadline := start.Add(s.grace)
	window, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	half := func() (context.Context, context.CancelFunc, time.Duration) {
		d, _ := window.Deadline()
		b := max(time.Until(d)/2, 0)
		c, cancel := context.WithTimeout(window, b)
		return c, cancel, b
	}

	// TD-1 answer_open: the pump answers what is open, and the connection
	// writes those answers, under one bound.
	if s.pump != nil && s.conn != nil {
		c, cancel, _ := half()
		ack := make(chan struct{})
		if s.pump.send(c, pumpAnswerOpen{ack: ack}) {
			select {
			case <-ack: // every answer so far is queued
				_ = s.conn.Flush(c)
			case <-c.Done():
			case <-s.pump.done:
			}
		}
		cancel()
	}

	// TD-2 close_session.
	if s.closeMethod != "" && s.conn != nil {
		s.closeSession(ctx, half)
	}

	if s.proc != nil {
		s.proc.Terminate()              // TD-3
		s.proc.CloseStdin()             // TD-4
		s.awaitExit(ctx, window, start) // TD-5
		s.proc.Kill()                   // TD-6
		_ = s.proc.Stdout().Close()     // TD-7 close_stdout
	}
	if s.conn != nil {
		_ = s.conn.Close() // TD-7 close_connection
	}
	if s.watchStop != nil {
		close(s.watchStop)
		<-s.watchDone
	}
	if s.pump != nil {
		close(s.pump.stop) // TD-8
		<-s.pump.done
	}
	if s.proc != nil {
		s.drainAndReap(ctx) // TD-9
		// TD-10 close_pipes, last, so a failed start can still report
		// what stderr collected.
		_ = s.proc.Stdout().Close()
		_ = s.proc.Stderr().Close()
		// Then the group's handles: on Windows the job, whose
		// kill-on-job-close is the last backstop.
		s.proc.Release()
	}
	if s.tap != nil {
		s.tap.close(s.proc)
	}
	// TD-11: the confirmed source's directory goes with the session
	// (RS-8); the pump, and with it any drain, has ended.
	if s.source != nil {
		_ = s.source.Close()
	}
}

// closeSession is TD-2 with the logs of CL-5 (close) and CL-6 (delete).
func (s *session) closeSession(caller context.Context, half func() (context.Context, context.CancelFunc, time.Duration)) {
	c, cancel, bound := half()
	defer cancel()
	var params any = &gen.CloseSessionRequest{SessionID: gen.SessionID(s.id)}
	if s.closeMethod == gen.MethodSessionDelete {
		params = &gen.DeleteSessionRequest{SessionID: gen.SessionID(s.id)}
	}
	err := s.conn.Call(c, s.closeMethod, params, nil)
	rpcErr, isRPC := errors.AsType[*acpsdk.Error](err)
	timedOut := !isRPC && err != nil && c.Err() != nil
	if s.closeMethod == gen.MethodSessionDelete {
		switch {
		case err == nil:
			s.log.Debug(logDeleted)
		case isRPC:
			s.log.Warn(logDeleteFailed, "code", rpcErr.Code)
		case timedOut:
			s.log.Warn(logDeleteFailed, "bound", bound, "outcome", logOutcome(caller, outcomeBoundElapsed))
		default:
			s.log.Warn(logDeleteFailed, "error", err.Error())
		}
		return
	}
	switch {
	case err == nil:
		s.log.Debug(logClosed)
	case isRPC:
		s.log.Warn(logCloseError, "code", rpcErr.Code)
	case timedOut:
		s.log.Warn(logCloseNotCompleted, "bound", bound, "outcome", logOutcome(caller, outcomeBoundElapsed))
	default:
		s.log.Debug(logCloseCallIncomplete)
	}
}

// awaitExit is TD-5: wait for the reap inside the grace window.
func (s *session) awaitExit(caller, window context.Context, start time.Time) {
	select {
	case <-s.proc.Exited():
		s.log.Debug(logExitedGraceful, "outcome", outcomeExited)
		return
	case <-window.Done():
	}
	// Both may be ready: the reap wins, so no false warning.
	select {
	case <-s.proc.Exited():
		s.log.Debug(logExitedGraceful, "outcome", outcomeExited)
		return
	default:
	}
	s.log.Warn(logForceTerminated,
		"outcome", logOutcome(caller, outcomeGraceElapsed),
		"grace", s.grace,
		"elapsed", time.Since(start))
}

// drainAndReap is TD-9: the stderr collector and the reap, each bounded by
// the drain bound (the reap also by the caller's deadline), then a last
// bounded finish of a collector a descendant is still feeding.
func (s *session) drainAndReap(caller context.Context) {
	t := time.NewTimer(s.a.drain)
	select {
	case <-s.stderr.Done():
	case <-t.C:
	}
	t.Stop()
	bound := time.Now().Add(s.a.drain)
	if d, ok := caller.Deadline(); ok && d.Before(bound) {
		bound = d
	}
	reap, cancel := context.WithDeadline(context.Background(), bound)
	select {
	case <-s.proc.Exited():
	case <-reap.Done():
	}
	cancel()
	select {
	case <-s.stderr.Done():
	default:
		fin, cancel := context.WithTimeout(context.Background(), s.a.drain)
		_ = s.stderr.Finish(fin)
		cancel()
	}
}
