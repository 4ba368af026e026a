//go:build unix

package check

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolate puts the agent in its own process group so acpcheck can signal
// and kill it together with any helper it forked.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends SIGTERM to the agent's process group.
func terminate(pid int) error { return unix.Kill(-pid, unix.SIGTERM) }

// killGroup sends SIGKILL to the agent's process group; errors (the group
// is already gone) are irrelevant to the caller.
func killGroup(pid int) { _ = unix.Kill(-pid, unix.SIGKILL) }

// signalName names the graceful signal in reports.
const signalName = "SIGTERM"
