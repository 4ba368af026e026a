//go:build unix

package launch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"acpkit.dev/adapter/internal/contain"
	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// Local starts the runtime as a child of this process on Unix: in its own
// process group, with the full parent environment plus Spec.Env, and with
// stdin, stdout and stderr as pipes (SP-1, SP-2). The zero value is ready.
type Local struct {
	// pipe makes one pipe; tests replace it to fail a chosen pipe (SP-4).
	pipe func() (r, w *os.File, err error)
}

var _ Launcher = Local{}

// Launch re-verifies spec.Dir (LT-5), creates the three pipes, starts the
// child in a new process group and starts its reaper. Failures are
// *fault.Error values: invalid_workspace_cwd (LT-5) or port_exit (SP-4);
// nothing is left running or open after a failure. A context already done
// refuses the start as port_exit (the spec leaves this open, Q-9).
func (l Local) Launch(ctx context.Context, spec Spec) (*Process, error) {
	if spec.Remote != nil {
		return nil, fault.New(contract.KindPortExit, MsgStart, errors.New("a launch over SSH needs the SSH launcher"))
	}
	dir, err := CheckWorkspace(spec.Dir)
	if err != nil {
		return nil, err
	}
	mkpipe := l.pipe
	if mkpipe == nil {
		mkpipe = os.Pipe
	}
	// parentEnds are kept on success; childEnds are closed after the start
	// either way, so the child holds the only copies.
	var parentEnds, childEnds []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	stdinR, stdinW, err := mkpipe()
	if err != nil {
		return nil, fault.New(contract.KindPortExit, MsgStdinPipe, err)
	}
	parentEnds, childEnds = append(parentEnds, stdinW), append(childEnds, stdinR)
	stdoutR, stdoutW, err := mkpipe()
	if err != nil {
		closeAll(parentEnds)
		closeAll(childEnds)
		return nil, fault.New(contract.KindPortExit, MsgStdoutPipe, err)
	}
	parentEnds, childEnds = append(parentEnds, stdoutR), append(childEnds, stdoutW)
	stderrR, stderrW, err := mkpipe()
	if err != nil {
		closeAll(parentEnds)
		closeAll(childEnds)
		return nil, fault.New(contract.KindPortExit, MsgStderrPipe, err)
	}
	parentEnds, childEnds = append(parentEnds, stderrR), append(childEnds, stderrW)

	if err := ctx.Err(); err != nil {
		closeAll(parentEnds)
		closeAll(childEnds)
		return nil, fault.New(contract.KindPortExit, MsgStart, err)
	}
	// TD-15: a cgroup to start in, or the tracked set's token; a start
	// the cgroup made fail is tried once more with the tracked set.
	setup := contain.Choose(spec.Contain, spec.Log)
	var cmd *exec.Cmd
	for {
		cmd = &exec.Cmd{
			Path:   spec.Program,
			Args:   append([]string{spec.Program}, spec.Args...),
			Dir:    dir,
			Env:    slices.Concat(os.Environ(), spec.Env, setup.Env()),
			Stdin:  stdinR,
			Stdout: stdoutW,
			Stderr: stderrW,
			// Setpgid with Pgid 0 makes the child the leader of a new
			// group whose id is its pid, so signals reach everything it
			// spawns that stays in the group.
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		}
		setup.Apply(cmd.SysProcAttr)
		if err = cmd.Start(); err == nil || !setup.Retry(err) {
			break
		}
	}
	closeAll(childEnds)
	if err != nil {
		setup.Abandon()
		closeAll(parentEnds)
		return nil, fault.New(contract.KindPortExit, MsgStart, err)
	}
	p := &Process{
		pid:     cmd.Process.Pid,
		stdin:   stdinW,
		stdout:  stdoutR,
		stderr:  stderrR,
		group:   unixGroup(cmd.Process.Pid),
		contain: setup.Started(cmd.Process.Pid),
		exited:  make(chan struct{}),
	}
	p.bindAndReap(ctx, cmd, spec.Grace)
	return p, nil
}

// exitStatus converts cmd.Wait's result.
func exitStatus(err error) ExitStatus {
	if err == nil {
		return ExitStatus{Code: 0}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return ExitStatus{Code: -1, Err: err}
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Code: -1, Signal: ws.Signal().String()}
	}
	return ExitStatus{Code: ee.ExitCode()}
}

// unixGroup controls the process group whose id is the leader's pid. After
// the group is empty its id may in principle be reused by an unrelated new
// group leader; the window is the instant between the last member's death
// and a teardown's kill, which the kernel's pid allocation makes remote.
type unixGroup int

func (g unixGroup) terminate() error { return unix.Kill(-int(g), unix.SIGTERM) }
func (g unixGroup) kill() error      { return unix.Kill(-int(g), unix.SIGKILL) }
