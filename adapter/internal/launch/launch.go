// Package launch resolves what a session start runs and starts it: the
// workspace and command checks of spec §3 (LT-*), and the Launcher seam
// with its local implementations (§5: SP-1..SP-4, SP-8's pipes, SP-9): a
// process group on Unix, a suspended start inside a Job Object on Windows
// (SP-5..SP-7).
//
// The SSH launcher (§21, ssh.go) composes ssh's arguments and the stdin
// preamble and starts the local ssh client through the local launcher, so
// the relay is an ordinary *Process. A Windows launcher (SP-5..SP-7) fills
// the same Process with job-object control.
package launch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"acpkit.dev/adapter/internal/contain"
)

// The SP-4 messages, byte for byte.
const (
	MsgStdinPipe  = "failed to create stdin pipe"
	MsgStdoutPipe = "failed to create stdout pipe"
	MsgStderrPipe = "failed to create stderr pipe"
	MsgStart      = "failed to start subprocess"
)

// Spec describes one process to start.
type Spec struct {
	// Program is the absolute path of the executable (Target.Program).
	Program string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the workspace, re-verified immediately before the start (LT-5)
	// and made the child's working directory.
	Dir string
	// Env holds assignments appended after the inherited parent environment,
	// so they override same-named variables (SP-1): the measurement sources'
	// assignments on a local launch.
	Env []string
	// Grace is how long the group has between the graceful signal and the
	// kill when the start's context ends (SP-3). Non-positive means 5 s.
	Grace time.Duration
	// Remote, when set, makes this a launch over SSH (§21), which only the
	// SSH launcher performs; Args and Env are then its own to compose.
	Remote *Remote
	// Log receives the launcher's own records (the Windows warnings of
	// SP-5 and SP-6, the containment chosen on Unix); nil discards them.
	Log *slog.Logger
	// Contain is how a local Unix launch keeps the runtime's descendants
	// within reach of teardown beyond its process group (TD-15); the zero
	// value asks for the default, a cgroup or else the tracked set. On
	// Windows the Job Object contains them (SP-5) and this is ignored.
	Contain contain.Config
}

// DefaultGrace is the SP-3 grace used when Spec.Grace is not positive; it
// equals the stop-grace default of CFG-6.
const DefaultGrace = 5 * time.Second

// Launcher starts a runtime process.
//
// ctx binds the process's whole life, not just the start (SP-3): when it
// ends, the process group gets the graceful signal and, grace later, the
// kill. A caller that wants the process to outlive ctx passes
// context.WithoutCancel(ctx).
type Launcher interface {
	Launch(ctx context.Context, spec Spec) (*Process, error)
}

// groupControl signals the process group a Process runs in. Each platform
// or transport (local Unix group, Windows job, ssh relay) has its own.
type groupControl interface {
	// terminate sends the graceful signal; it never waits.
	terminate() error
	// kill force-terminates every member of the group.
	kill() error
}

// Process is a started runtime: its pipes, its group and its reap.
//
// The session owns the read ends of stdout and stderr for the whole
// session: the reap never closes them (SP-2), so output written by a
// descendant after the runtime exited is still readable, and closing them
// is the session's last teardown step (TD-10).
type Process struct {
	pid    int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr io.ReadCloser
	group  groupControl
	// contain is what holds the runtime's descendants beyond its group
	// on Unix (TD-15): a cgroup or the tracked set; nil when none does.
	contain *contain.Contained
	// release frees what the group holds once nothing needs it any more
	// (Windows: the job handle); nil when there is nothing to free.
	release     func()
	releaseOnce sync.Once

	exited chan struct{}
	status ExitStatus // written once, before exited is closed
	// signalled latches when Terminate or Kill ran before the reap.
	signalled atomic.Bool
}

// PID is the process id as a decimal string (SP-9); "" for a runtime
// served over the network, which has no process ([acpkit], Dialed).
func (p *Process) PID() string {
	if p.pid == 0 {
		return ""
	}
	return strconv.Itoa(p.pid)
}

// Stdin is the write end of the child's standard input.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the read end of the child's standard output.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Stderr is the read end of the child's standard error.
func (p *Process) Stderr() io.ReadCloser { return p.stderr }

// Terminate sends the graceful signal (SIGTERM on Unix, CTRL_BREAK_EVENT
// on Windows) to the process group (TD-3). It never waits, and its
// failures are ignored: the group may already be gone, and the kill that
// follows in teardown is the backstop.
func (p *Process) Terminate() {
	p.markSignalled()
	_ = p.group.terminate()
}

// Kill sends SIGKILL to the process group (TD-6); on Windows it
// terminates the job. It is safe to call after the reap: members that
// stayed in the group (for example a descendant holding stdout) are still
// killed. On Unix the containment kill follows as the backstop (TD-15):
// the cgroup, or every tracked descendant, wherever it moved; without
// containment a descendant that moved itself into another group survives
// (TD-12). On Windows none can leave the job.
func (p *Process) Kill() {
	p.markSignalled()
	p.contain.Observe()
	_ = p.group.kill()
	p.contain.Kill()
}

// markSignalled records, before a signal is sent, that the process did not
// end on its own if it has not been reaped yet (ExitStatus.Stopped).
func (p *Process) markSignalled() {
	select {
	case <-p.exited:
	default:
		p.signalled.Store(true)
	}
}

// Release frees the group's handles and must come last, after the read
// ends are closed (TD-10). On Windows it closes the job handle, whose
// kill-on-job-close ends any member still in the job. On Unix it kills
// what containment holds once more, waits (at most contain.ReleaseBound)
// until it is gone, and removes the cgroup or stops tracking (TD-15).
// Calling it again does nothing.
func (p *Process) Release() {
	p.releaseOnce.Do(func() {
		p.contain.Release()
		if p.release != nil {
			p.release()
		}
	})
}

// Containment is the layer that holds the runtime's descendants beyond
// its process group (TD-15), and the session's cgroup directory when it
// is a cgroup.
func (p *Process) Containment() (contain.Mechanism, string) {
	return p.contain.Mechanism(), p.contain.Cgroup()
}

// CloseStdin closes the write end of the child's standard input (TD-4).
// Closing a pipe does not block; a write blocked in another goroutine
// returns an error.
func (p *Process) CloseStdin() { _ = p.stdin.Close() }

// Exited is closed once the child has exited and been reaped. The reap
// happens exactly once, on a goroutine of the launcher.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Status is the exit status. It is meaningful only after Exited is closed;
// before that it returns the zero value.
func (p *Process) Status() ExitStatus {
	select {
	case <-p.exited:
		st := p.status
		st.Stopped = p.signalled.Load()
		return st
	default:
		return ExitStatus{}
	}
}

// endGroup is the SP-3 binding: graceful signal, then the kill once grace
// has passed without the reap.
func (p *Process) endGroup(grace time.Duration) {
	p.Terminate()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.Kill()
	}
}

// ExitStatus is how a reaped process ended.
type ExitStatus struct {
	// Code is the exit code, or -1 when a signal ended the process or the
	// wait itself failed.
	Code int
	// Signal names the signal that ended the process ("terminated",
	// "killed"), or is empty.
	Signal string
	// Err is set when the wait failed and the status is unknown.
	Err error
	// Stopped is true when this package had signalled the group (teardown
	// or the SP-3 binding) before the reap: the process did not end on its
	// own, so, say, ssh's 255 after our SIGTERM is no connection failure.
	Stopped bool
}

// String renders the status the way the early exit report quotes it
// (SS-3): "exit status 7", "exit status 0", "signal: killed".
func (s ExitStatus) String() string {
	switch {
	case s.Err != nil:
		return "exit status unknown: " + s.Err.Error()
	case s.Signal != "":
		return "signal: " + s.Signal
	default:
		return fmt.Sprintf("exit status %d", s.Code)
	}
}
