//go:build linux || darwin

package contain

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// scanInterval is how often the process table is read while a session is
// tracked. A descendant is tracked from the first read that sees its
// parent tracked; one orphaned sooner is found by its token, if it kept
// its environment.
const scanInterval = 250 * time.Millisecond

// maxKillRounds bounds a kill's stop-and-rescan rounds: a tree that keeps
// growing (a fork bomb) is killed as far as that many rounds found it.
const maxKillRounds = 64

// errGone reports that no process with a key's pid and start exists any
// more: it ended, and the pid may now belong to another process.
var errGone = errors.New("contain: the process is gone")

// source is where the tracked set reads the process table; tests wrap the
// platform's to replay a stale read.
type source interface {
	// list returns every process now.
	list() ([]Proc, error)
	// token returns the containment token in p's environment, or "";
	// final is false when the read failed for a passing reason and
	// should be tried again at the next read.
	token(p Proc) (tok string, final bool)
}

// scanner reads the process table at an interval for every tracked session
// of this process at once, so many sessions cost one read. It runs only
// while a session is tracked.
type scanner struct {
	src      source
	interval time.Duration
	// scanned, when set, is called after each read of the interval's
	// (tests wait on it).
	scanned func()

	// mu guards the fields below and the state of every tracker, and
	// serialises the reads.
	mu       sync.Mutex
	trackers map[*tracker]struct{}
	// tokens caches each young process's token, read once (or until a
	// read is final); a read drops the processes that ended.
	tokens map[Key]string
	stop   chan struct{}
	done   chan struct{}
}

// processScanner is the scanner of this machine's process table.
var processScanner = newScanner(newPlatformSource(), scanInterval)

func newScanner(src source, interval time.Duration) *scanner {
	return &scanner{src: src, interval: interval, trackers: map[*tracker]struct{}{}, tokens: map[Key]string{}}
}

// tracker is one session's tracked set.
type tracker struct {
	s     *scanner
	root  Key
	token string
	// known holds the tracked processes the last read saw alive.
	known map[Key]bool
	// held holds a handle on every process the kill signalled.
	held     map[Key]handle
	released bool
}

// track starts tracking the descendants of the runtime rootPID, which
// must be this process's unreaped child, and those carrying token.
func (s *scanner) track(rootPID int, token string) (*tracker, error) {
	root, _, err := Lookup(rootPID)
	if err != nil {
		return nil, fmt.Errorf("contain: reading the runtime %d: %w", rootPID, err)
	}
	t := &tracker{s: s, root: root.Key(), token: token, known: map[Key]bool{root.Key(): true}, held: map[Key]handle{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trackers[t] = struct{}{}
	if s.stop == nil {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.run(s.stop, s.done)
	}
	return t, nil
}

// untrack forgets t and stops the reads when no session is tracked.
func (s *scanner) untrack(t *tracker) {
	s.mu.Lock()
	delete(s.trackers, t)
	var stop, done chan struct{}
	if len(s.trackers) == 0 && s.stop != nil {
		stop, done = s.stop, s.done
		s.stop, s.done, s.tokens = nil, nil, map[Key]string{}
	}
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (s *scanner) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.mu.Lock()
			s.scanLocked()
			s.mu.Unlock()
			if s.scanned != nil {
				s.scanned()
			}
		}
	}
}

// scanLocked reads the table once and lets every tracker see it.
func (s *scanner) scanLocked() {
	if len(s.trackers) == 0 {
		return
	}
	procs, err := s.src.list()
	if err != nil {
		return
	}
	oldest := uint64(math.MaxUint64)
	for t := range s.trackers {
		oldest = min(oldest, t.root.Start)
	}
	byPID := make(map[int]Proc, len(procs))
	// young are the processes that started no earlier than the oldest
	// tracked runtime: the only ones that can descend from one.
	var young []Proc
	tokens := make(map[Key]string, len(s.tokens))
	for _, p := range procs {
		byPID[p.PID] = p
		if p.Start < oldest {
			continue
		}
		young = append(young, p)
		k := p.Key()
		tok, seen := s.tokens[k]
		if !seen {
			var final bool
			if tok, final = s.src.token(p); !final {
				continue
			}
		}
		tokens[k] = tok
	}
	s.tokens = tokens
	for t := range s.trackers {
		t.observe(young, byPID, tokens)
	}
}

// observe updates the tracked set from one read: the processes that
// ended leave it; a process that carries the token, or whose parent is
// tracked (confirmed afresh, as the read may hold an old entry for its
// pid), joins it — repeatedly, so a whole new branch joins at once.
func (t *tracker) observe(young []Proc, byPID map[int]Proc, tokens map[Key]string) {
	for k := range t.known {
		if p, ok := byPID[k.PID]; !ok || p.Start != k.Start {
			delete(t.known, k)
		}
	}
	for grew := true; grew; {
		grew = false
		for _, p := range young {
			k := p.Key()
			if p.Start < t.root.Start || t.known[k] {
				continue
			}
			joins := t.token != "" && tokens[k] == t.token
			if parent, ok := byPID[p.PPID]; !joins && ok && t.known[parent.Key()] {
				cur, _, err := Lookup(parent.PID)
				joins = err == nil && cur.Start == parent.Start
			}
			if joins {
				t.known[k] = true
				grew = true
			}
		}
	}
}

// refresh reads the table now, so the set is current before the group
// kill orphans what the runtime spawned outside its group.
func (t *tracker) refresh() {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if !t.released {
		t.s.scanLocked()
	}
}

// kill stops every tracked process (a stopped process cannot fork),
// rereads the table until a read finds nothing new to stop, then kills
// them all. Every signal goes through a handle that proved the process is
// the one tracked, so a pid reused meanwhile is never signalled (TD-16).
func (t *tracker) kill() {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.released {
		return
	}
	for range maxKillRounds {
		t.s.scanLocked()
		stopped := 0
		for k := range t.known {
			if _, ok := t.held[k]; ok {
				continue
			}
			h, err := openHandle(k)
			if err != nil {
				continue // ended, or its pid is another process's now
			}
			t.held[k] = h
			_ = h.signal(unix.SIGSTOP)
			stopped++
		}
		if stopped == 0 {
			break
		}
	}
	for _, h := range t.held {
		_ = h.signal(unix.SIGKILL)
	}
}

// release kills once more, stops tracking and waits until deadline for
// every process the kills signalled to end. It returns how many had not.
func (t *tracker) release(deadline time.Time) int {
	t.kill()
	t.s.mu.Lock()
	t.released = true
	hs := slices.Collect(maps.Values(t.held))
	t.held = nil
	t.s.mu.Unlock()
	t.s.untrack(t)
	left := awaitExit(hs, deadline)
	for _, h := range hs {
		h.close()
	}
	return left
}

// Alive reports whether the process k names is running: it exists with
// k's start and has not ended (a zombie has).
func Alive(k Key) bool {
	p, zombie, err := Lookup(k.PID)
	return err == nil && p.Start == k.Start && !zombie
}
