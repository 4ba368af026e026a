//go:build windows

package launch

import (
	"os"
	"sync"

	"golang.org/x/sys/windows"
)

// killedExitCode is the exit code TerminateJobObject and TerminateProcess
// give the processes they end, as os.Process.Kill does.
const killedExitCode = 1

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
