//go:build windows

package acpsdk

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
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
	if err := resumeThread(cmd.Process.Pid); err != nil {
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
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err == nil {
		if herr := cmd.Process.WithHandle(func(h uintptr) {
			err = windows.AssignProcessToJobObject(job, windows.Handle(h))
		}); herr != nil {
			err = herr
		}
	}
	if err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// resumeThread resumes the one thread of a process created suspended,
// found by enumerating threads: os/exec closes the thread handle.
func resumeThread(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		return err
	}
	if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return errors.New("no thread of the process was found")
	}
	return err
}
