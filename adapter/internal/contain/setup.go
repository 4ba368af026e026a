package contain

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Setup is one launch's containment: chosen before the runtime starts
// (Choose), applied to the start (Env, Apply, Retry), and bound to the
// runtime once it runs (Started).
type Setup struct {
	mech   Mechanism
	reason string
	cg     *cgroup
	token  string
	log    *slog.Logger
}

// Choose picks the first layer cfg allows that works here. It never
// fails: a layer that cannot be used becomes the reason recorded for the
// one chosen instead. log receives the records (nil discards them).
func Choose(cfg Config, log *slog.Logger) *Setup {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Setup{log: log}
	switch cfg.Mode {
	case Off:
		s.mech, s.reason = ProcessGroup, cmp.Or(cfg.Reason, ReasonOff)
	case Tracked:
		s.track("containment is set to " + string(Tracked))
	default:
		cg, err := newCgroup(cfg.CgroupParent)
		if err != nil {
			s.track("no cgroup: " + err.Error())
			break
		}
		s.mech, s.cg = Cgroup, cg
	}
	return s
}

// track chooses the tracked set, or the process group alone when the set
// cannot work here; why is the reason there is no cgroup.
func (s *Setup) track(why string) {
	if err := trackingAvailable(); err != nil {
		s.mech, s.reason = ProcessGroup, fmt.Sprintf("%s; no tracked set: %v", why, err)
		return
	}
	s.mech, s.reason, s.token = TrackedSet, why, rand.Text()
}

// Mechanism is the layer chosen.
func (s *Setup) Mechanism() Mechanism { return s.mech }

// Env returns what the start appends to the runtime's environment: with
// the tracked set, the session's token, which every descendant inherits
// unless it clears its environment.
func (s *Setup) Env() []string {
	if s.token == "" {
		return nil
	}
	return []string{EnvToken + "=" + s.token}
}

// Retry is called when the start failed. A start inside a cgroup can fail
// where a plain one would not (clone3 refused by a seccomp filter, a
// cgroup this process may not move processes into), so the cgroup is
// removed and the tracked set chosen instead; Retry reports whether to
// start once more (with Env and Apply again). A start that fails again
// failed for a reason of its own.
func (s *Setup) Retry(err error) bool {
	if s.cg == nil {
		return false
	}
	dir := s.cg.dir
	s.Abandon()
	s.track(fmt.Sprintf("the runtime could not start in %s: %v", dir, err))
	return true
}

// Abandon frees what Choose made, for a start that failed for good.
func (s *Setup) Abandon() {
	if s.cg != nil {
		s.cg.closeFD()
		_ = s.cg.remove()
		s.cg = nil
	}
}

// Started binds the chosen layer to the runtime pid, which must be this
// process's unreaped child, and logs the choice (LogChosen). It returns nil
// when nothing beyond the process group contains the runtime.
func (s *Setup) Started(pid int) *Contained {
	c := &Contained{mech: s.mech, cg: s.cg, log: s.log}
	if s.cg != nil {
		s.cg.closeFD()
	}
	if s.mech == TrackedSet {
		t, err := processScanner.track(pid, s.token)
		if err != nil {
			c.mech, s.reason = ProcessGroup, fmt.Sprintf("%s; no tracked set: %v", s.reason, err)
		}
		c.t = t
	}
	attrs := []any{"mechanism", string(c.mech), "pid", pid}
	if c.cg != nil {
		attrs = append(attrs, "cgroup", c.cg.dir)
	} else {
		attrs = append(attrs, "reason", s.reason)
	}
	s.log.Info(LogChosen, attrs...)
	if c.mech == ProcessGroup {
		return nil
	}
	return c
}

// Contained is a running runtime's containment. Its methods do nothing on
// a nil *Contained, so a launch without containment needs no checks.
type Contained struct {
	mech        Mechanism
	cg          *cgroup
	t           *tracker
	log         *slog.Logger
	releaseOnce sync.Once
}

// Mechanism is the layer that contains the runtime.
func (c *Contained) Mechanism() Mechanism {
	if c == nil {
		return ProcessGroup
	}
	return c.mech
}

// Cgroup is the session's cgroup directory, or "" without one.
func (c *Contained) Cgroup() string {
	if c == nil || c.cg == nil {
		return ""
	}
	return c.cg.dir
}

// Observe brings the tracked set up to date, so that what the group kill
// is about to orphan is known; it signals nothing. Call it just before the
// group kill.
func (c *Contained) Observe() {
	if c != nil && c.t != nil {
		c.t.refresh()
	}
}

// Kill ends every contained process without waiting: cgroup.kill, or the
// tracked set stopped, rescanned until nothing new appears, and killed.
// It is the backstop after the group kill, and may be called again.
func (c *Contained) Kill() {
	switch {
	case c == nil:
	case c.cg != nil:
		_ = c.cg.kill()
	case c.t != nil:
		c.t.kill()
	}
}

// Release kills once more, waits up to ReleaseBound until nothing
// contained is alive, then frees what containment holds: it removes the
// cgroup, or stops tracking. A process still alive then is logged
// (LogOutlived); a cgroup that still holds one stays. Calls after the
// first do nothing.
func (c *Contained) Release() {
	if c == nil {
		return
	}
	c.releaseOnce.Do(func() {
		deadline := time.Now().Add(ReleaseBound)
		switch {
		case c.cg != nil:
			_ = c.cg.kill()
			empty, err := c.cg.awaitEmpty(deadline)
			if err == nil && empty {
				err = c.cg.remove()
			}
			if err != nil || !empty {
				attrs := []any{"mechanism", string(c.mech), "bound", ReleaseBound, "cgroup", c.cg.dir}
				if err != nil {
					attrs = append(attrs, "error", err.Error())
				}
				c.log.Warn(LogOutlived, attrs...)
			}
		case c.t != nil:
			if left := c.t.release(deadline); left > 0 {
				c.log.Warn(LogOutlived, "mechanism", string(c.mech), "bound", ReleaseBound, "count", left)
			}
		}
	})
}
