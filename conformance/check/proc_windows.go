//go:build windows

package check

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// isolate starts the agent as the leader of a new process group, so the
// console control event reaches it and not acpcheck.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// terminate sends CTRL_BREAK_EVENT to the agent's process group, whose id
// is the agent's pid.
func terminate(pid int) error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
}

// killGroup kills the agent process; Windows has no group kill without a
// job, and a descendant that outlives it cannot delay Close (see Close).
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// signalName names the graceful signal in reports.
const signalName = "CTRL_BREAK_EVENT"
