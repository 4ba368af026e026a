//go:build windows

package launch

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// killedExitCode is the exit code TerminateJobObject and TerminateProcess
// give the processes they end, as os.Process.Kill does.
const killedExitCode = 1

// errNoThread is the resume failure of a process whose thread is not found.
var errNoThread = errors.New("no thread of the process was found")

// newKillOnCloseJob creates a Job Object whose members all die when its
// last handle closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so nothing the
// runtime spawns outlives the adapter, even one that crashes.
func newKillOnCloseJob() (windows.Handle, error) {
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

// assignToJob puts p into job through p's own process handle (the one
// CreateProcess returned, which os.Process keeps), with assign doing the
// call.
func assignToJob(job windows.Handle, p *os.Process, assign func(job, process windows.Handle) error) error {
	var err error
	if herr := p.WithHandle(func(h uintptr) { err = assign(job, windows.Handle(h)) }); herr != nil {
		return herr
	}
	return err
}

// resumePrimaryThread resumes the only thread of a process created with
// CREATE_SUSPENDED. os/exec closes the thread handle CreateProcess
// returned, so the thread is found by enumerating the system's threads;
// the process's own handle, held by os.Process, keeps its pid from being
// reused meanwhile.
func resumePrimaryThread(pid int) error {
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
	return errNoThread
}

// jobGroup is a Windows runtime's group: the process group the child leads
// (CREATE_NEW_PROCESS_GROUP, its id is the child's pid) for the console
// control event, and the job for the kill. With no job (SP-5's failed
// assignment) the kill reaches the child alone.
type jobGroup struct {
	pid  uint32
	proc *os.Process
	// ctrlEvent is GenerateConsoleCtrlEvent; tests replace it, because
	// Wine does not deliver console control events.
	ctrlEvent func(event, groupID uint32) error

	mu  sync.Mutex
	job windows.Handle // 0 without a job, or once released
}

// terminate sends CTRL_BREAK_EVENT to the child's process group (TD-3).
func (g *jobGroup) terminate() error {
	return g.ctrlEvent(windows.CTRL_BREAK_EVENT, g.pid)
}

// kill terminates every process in the job (TD-6), which includes each
// descendant: none can leave a job that does not allow breakaway. The
// lock keeps a concurrent release from closing the handle under the call.
func (g *jobGroup) kill() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		return windows.TerminateJobObject(g.job, killedExitCode)
	}
	return g.proc.Kill()
}

// release closes the job handle; kill-on-job-close ends whatever is still
// in the job.
func (g *jobGroup) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
		g.job = 0
	}
}
