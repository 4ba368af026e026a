package adapter

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/adapter/internal/launch"
)

// WireKind says what a WireEvent observed.
type WireKind string

// The kinds of WireEvent.
const (
	// WireSpawn: the runtime's process started (AgentPID, Argv).
	WireSpawn WireKind = "spawn"
	// WireSend: a line written to the runtime's stdin.
	WireSend WireKind = "send"
	// WireRecv: a line read from the runtime's stdout.
	WireRecv WireKind = "recv"
	// WireStderr: a line the runtime wrote to its stderr, as it was read
	// (before the adapter's sanitising and masking).
	WireStderr WireKind = "stderr"
	// WireExit: the runtime's process was reaped (ExitStatus, ExitCode).
	// It comes after the runtime's last stderr line, unless a descendant
	// keeps stderr open: then it comes the drain bound after the reap.
	WireExit WireKind = "exit"
)

// WireEvent is one observation of a session's runtime: a line each way, a
// stderr line, or a process event.
type WireEvent struct {
	Kind WireKind
	// Time is when the adapter saw it. It carries the monotonic clock and
	// never decreases from one event of a session to the next.
	Time time.Time
	// AgentPID is the runtime's process id, telling sessions apart.
	AgentPID string
	// Line is the line without its newline, byte for byte (send, recv,
	// stderr). It is only valid during the call: copy it to keep it.
	Line []byte
	// Argv is the command line that was started (spawn).
	Argv []string
	// ExitStatus renders how the process ended, e.g. "exit status 0" or
	// "signal: killed"; ExitCode is its exit code, -1 for a signal (exit).
	ExitStatus string
	ExitCode   int
}

// WithWireTap hands every session's traffic to tap as it happens: each
// protocol line both ways, each stderr line, the spawn and the exit. It is
// for transcripts and live views (acprun --record); the adapter's own
// behaviour does not change. tap runs on the adapter's reader, writer and
// process goroutines, must be safe for concurrent use and must return
// quickly; it is never called after StopSession has returned.
func WithWireTap(tap func(WireEvent)) Option { return func(o *options) { o.tap = tap } }

// tapper binds a tap to one launched process.
type tapper struct {
	tap   func(WireEvent)
	pid   string
	drain time.Duration // how long the exit waits for stderr's end
	done  chan struct{} // closed once the exit has been reported

	// stderrEnded closes when the stderr tap's read returns its first
	// error; cut closes when teardown ends the tap. Either releases the
	// exit, which otherwise waits at most drain after the reap.
	stderrEnded chan struct{}
	endOnce     sync.Once
	cut         chan struct{}

	mu     sync.Mutex // held across a call of tap, so close waits for it
	closed bool
}

func (t *tapper) emit(e WireEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Stamped under the lock, so the events' times rise in the order
	// the tap receives them.
	e.Time, e.AgentPID = time.Now(), t.pid
	if !t.closed {
		t.tap(e)
	}
}

// close ends the tap at the end of teardown: the exit is reported first
// when the process has been reaped, and nothing is reported afterwards
// (a stderr reader still draining a descendant's output is cut off).
func (t *tapper) close(proc *launch.Process) {
	if t.cut != nil {
		close(t.cut)
	}
	select {
	case <-proc.Exited():
		<-t.done
	default:
	}
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// conn is the acpsdk tap of the session's connection.
func (t *tapper) conn(dir acpsdk.Direction, line []byte) {
	kind := WireRecv
	if dir == acpsdk.DirectionOut {
		kind = WireSend
	}
	t.emit(WireEvent{Kind: kind, Line: line})
}

// spawned reports the start and, on its own goroutine, the exit of proc.
// The exit follows the runtime's last stderr line: a process is often
// reaped while what it wrote last is still in the pipe, so the exit waits
// for stderr's end, for teardown, or at most the drain bound after the
// reap (a descendant may hold stderr open for ever). That goroutine ends
// when the process is reaped, which teardown guarantees.
func (t *tapper) spawned(proc *launch.Process, spec launch.Spec) {
	t.emit(WireEvent{Kind: WireSpawn, Argv: append([]string{spec.Program}, spec.Args...)})
	t.done, t.stderrEnded, t.cut = make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(t.done)
		<-proc.Exited()
		bound := time.NewTimer(t.drain)
		defer bound.Stop()
		select {
		case <-t.stderrEnded:
		case <-t.cut:
		case <-bound.C:
		}
		st := proc.Status()
		t.emit(WireEvent{Kind: WireExit, ExitStatus: st.String(), ExitCode: st.Code})
	}()
}

// stderr wraps the runtime's stderr so the tap sees each line as it is
// read. Read deadlines pass through, so the collector's bounded finish
// (TD-9) works as without the tap.
func (t *tapper) stderr(r io.Reader) io.Reader {
	return &stderrTap{r: r, t: t}
}

// stderrTap splits what passes through it into lines for the tap.
type stderrTap struct {
	r       io.Reader
	t       *tapper
	partial []byte
}

// maxTapLine bounds a stderr line the tap assembles; a longer one is
// handed over in pieces of this size.
const maxTapLine = 64 << 10

func (s *stderrTap) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			s.partial = append(s.partial, data...)
			if len(s.partial) >= maxTapLine {
				s.flush()
			}
			break
		}
		s.partial = append(s.partial, data[:i]...)
		s.flush()
		data = data[i+1:]
	}
	if err != nil {
		if len(s.partial) > 0 {
			s.flush() // a last line without its newline
		}
		if s.t.stderrEnded != nil {
			s.t.endOnce.Do(func() { close(s.t.stderrEnded) })
		}
	}
	return n, err
}

func (s *stderrTap) flush() {
	s.t.emit(WireEvent{Kind: WireStderr, Line: s.partial})
	s.partial = s.partial[:0]
}

// SetReadDeadline passes the collector's deadline to the pipe.
func (s *stderrTap) SetReadDeadline(t time.Time) error {
	if d, ok := s.r.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return os.ErrNoDeadline
}
