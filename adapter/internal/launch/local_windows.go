//go:build windows

package launch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
	"acpkit.dev/internal/winjob"
)

// The Windows start's records (SP-5, SP-6; LOG-3, LOG-4) and the SP-7
// message (this implementation's text, Q-9), byte for byte.
const (
	LogAssignFailed   = "process group assignment failed"
	LogResumeFailed   = "process resume failed"
	MsgStartCancelled = "session start was cancelled before the runtime was resumed"
)

// Local starts the runtime as a child of this process on Windows: created
// suspended in a new process group, assigned to a Job Object with
// kill-on-job-close through its process handle, then resumed, so nothing
// it spawns runs outside the job (SP-5). It inherits the full parent
// environment plus Spec.Env, and its stdin, stdout and stderr are pipes
// (SP-1, SP-2). The zero value is ready.
type Local struct {
	// pipe makes one pipe; tests replace it to fail a chosen pipe (SP-4).
	pipe func(parentReads bool) (parent, child *os.File, err error)
	// assign and resume are the two steps SP-5 and SP-6 describe the
	// failures of; tests replace them. nil means the real call.
	assign func(job, process windows.Handle) error
	resume func(pid int) error
	// ctrlEvent is GenerateConsoleCtrlEvent; nil means the real call.
	ctrlEvent func(event, groupID uint32) error
}

var _ Launcher = Local{}

// Launch re-verifies spec.Dir (LT-5), creates the three pipes, starts the
// child suspended, puts it in a job and resumes it, then starts its reaper.
// Failures are *fault.Error values: invalid_workspace_cwd (LT-5), port_exit
// (SP-4, SP-6) or turn_cancelled (SP-7); nothing is left running or open
// after a failure. A failed assignment is not a failure: it is logged and
// the child runs without a job (SP-5). A context already done before the
// start refuses it as port_exit, as on Unix.
func (l Local) Launch(ctx context.Context, spec Spec) (*Process, error) {
	dir, err := CheckWorkspace(spec.Dir)
	if err != nil {
		return nil, err
	}
	mkpipe := l.pipe
	if mkpipe == nil {
		mkpipe = overlappedPipe
	}
	// parentEnds are kept on success; childEnds are closed after the start
	// either way, so the child holds the only copies.
	var parentEnds, childEnds []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	for _, p := range []struct {
		parentReads bool
		msg         string
	}{{false, MsgStdinPipe}, {true, MsgStdoutPipe}, {true, MsgStderrPipe}} {
		parent, child, err := mkpipe(p.parentReads)
		if err != nil {
			closeAll(parentEnds)
			closeAll(childEnds)
			return nil, fault.New(contract.KindPortExit, p.msg, err)
		}
		parentEnds, childEnds = append(parentEnds, parent), append(childEnds, child)
	}

	if err := ctx.Err(); err != nil {
		closeAll(parentEnds)
		closeAll(childEnds)
		return nil, fault.New(contract.KindPortExit, MsgStart, err)
	}
	cmd := &exec.Cmd{
		Path:   spec.Program,
		Args:   append([]string{spec.Program}, spec.Args...),
		Dir:    dir,
		Env:    append(os.Environ(), spec.Env...),
		Stdin:  childEnds[0],
		Stdout: childEnds[1],
		Stderr: childEnds[2],
		// Suspended, so it runs nothing before the job holds it; a new
		// process group led by the child, so CTRL_BREAK_EVENT reaches it
		// and not this process.
		SysProcAttr: &syscall.SysProcAttr{
			CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP,
		},
	}
	err = cmd.Start()
	closeAll(childEnds)
	if err != nil {
		closeAll(parentEnds)
		return nil, fault.New(contract.KindPortExit, MsgStart, err)
	}

	g := &jobGroup{pid: uint32(cmd.Process.Pid), proc: cmd.Process, ctrlEvent: l.ctrlEvent}
	if g.ctrlEvent == nil {
		g.ctrlEvent = windows.GenerateConsoleCtrlEvent
	}
	log := spec.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	attrs := []any{"command", filepath.Base(spec.Program), "dir", dir}
	if job, err := l.joinJob(cmd.Process); err != nil {
		log.Warn(LogAssignFailed, append(attrs, "error", err.Error())...)
	} else {
		g.job = job
	}
	// abandon ends a child that was never resumed and frees everything.
	abandon := func() {
		_ = g.kill()
		_ = cmd.Wait()
		closeAll(parentEnds)
		g.release()
	}
	if err := ctx.Err(); err != nil {
		abandon() // SP-7: it never ran, so there is nothing to warn about
		return nil, fault.New(contract.KindTurnCancelled, MsgStartCancelled, err)
	}
	resume := l.resume
	if resume == nil {
		resume = winjob.ResumeSuspended
	}
	if err := resume(cmd.Process.Pid); err != nil {
		log.Warn(LogResumeFailed, append(attrs, "error", err.Error())...)
		abandon() // SP-6
		return nil, fault.New(contract.KindPortExit, MsgStart, err)
	}

	p := &Process{
		pid:     cmd.Process.Pid,
		stdin:   parentEnds[0],
		stdout:  parentEnds[1],
		stderr:  parentEnds[2],
		group:   g,
		release: g.release,
		exited:  make(chan struct{}),
	}
	p.bindAndReap(ctx, cmd, spec.Grace)
	return p, nil
}

// joinJob creates the kill-on-close job and assigns p to it; on failure no
// job is left open.
func (l Local) joinJob(p *os.Process) (windows.Handle, error) {
	job, err := winjob.NewKillOnClose()
	if err != nil {
		return 0, err
	}
	assign := l.assign
	if assign == nil {
		assign = windows.AssignProcessToJobObject
	}
	if err := winjob.Assign(job, p, assign); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// exitStatus converts cmd.Wait's result. Windows has no signals: a killed
// process reports the exit code its killer chose (killedExitCode).
func exitStatus(err error) ExitStatus {
	if err == nil {
		return ExitStatus{Code: 0}
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ExitStatus{Code: ee.ExitCode()}
	}
	return ExitStatus{Code: -1, Err: err}
}
