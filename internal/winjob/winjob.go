//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ErrNoThread is the resume failure of a process whose thread is not found.
var ErrNoThread = errors.New("no thread of the process was found")

// NewKillOnClose creates a Job Object whose members all die when its last
// handle closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so nothing the child
// spawns outlives its owner, even one that crashes.
func NewKillOnClose() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("set kill-on-job-close: %w", err)
	}
	return job, nil
}

// Assign puts p into job through p's own process handle (the one
// CreateProcess returned, which os.Process keeps), with assign doing the
// call: windows.AssignProcessToJobObject, or a test's stand-in.
func Assign(job windows.Handle, p *os.Process, assign func(job, process windows.Handle) error) error {
	var err error
	if herr := p.WithHandle(func(h uintptr) { err = assign(job, windows.Handle(h)) }); herr != nil {
		return herr
	}
	return err
}

// ResumeSuspended resumes the only thread of a process created with
// CREATE_SUSPENDED. os/exec closes the thread handle CreateProcess
// returned, so the thread is found by enumerating the system's threads;
// the process's own handle, held by os.Process, keeps its pid from being
// reused meanwhile. A process with no thread found gives ErrNoThread.
func ResumeSuspended(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("snapshot threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", te.ThreadID, err)
		}
		return nil
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("enumerate threads: %w", err)
	}
	return ErrNoThread
}
