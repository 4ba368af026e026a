//go:build windows

package acpsdk

import (
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"acpkit.dev/internal/winjob"
)

// prepareStart asks for a suspended start, so the child runs nothing
// before finishStart has put it in its job.
func prepareStart(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
}

// finishStart keeps the child's descendants from outliving it: it puts the
// suspended child in a Job Object with kill-on-job-close, resumes it, and
// closes the job once the child has exited, which ends every descendant
// still running. A child that cannot join a job (the job was refused)
// still runs, without that guarantee. A child that cannot be resumed is
// killed and reaped, and the start fails.
func finishStart(cmd *exec.Cmd) error {
	job, jobErr := joinKillOnCloseJob(cmd)
	if err := winjob.ResumeSuspended(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if jobErr == nil {
			_ = windows.CloseHandle(job)
		}
		return fmt.Errorf("acpsdk: resuming %s: %w", cmd.Path, err)
	}
	if jobErr != nil {
		return nil
	}
	// A handle of our own to wait on: cmd.Wait may close os/exec's first.
	var exited windows.Handle
	err := cmd.Process.WithHandle(func(h uintptr) {
		self := windows.CurrentProcess()
		err := windows.DuplicateHandle(self, windows.Handle(h), self, &exited, windows.SYNCHRONIZE, false, 0)
		if err != nil {
			exited = 0
		}
	})
	if err != nil || exited == 0 {
		// Without a handle to wait on, the job lives as long as this
		// process: its descendants end with us instead.
		return nil
	}
	go func() {
		_, _ = windows.WaitForSingleObject(exited, windows.INFINITE)
		_ = windows.CloseHandle(exited)
		_ = windows.CloseHandle(job)
	}()
	return nil
}

// joinKillOnCloseJob creates a kill-on-job-close job and assigns the
// child to it through the child's process handle.
func joinKillOnCloseJob(cmd *exec.Cmd) (windows.Handle, error) {
	job, err := winjob.NewKillOnClose()
	if err != nil {
		return 0, err
	}
	if err := winjob.Assign(job, cmd.Process, windows.AssignProcessToJobObject); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}
