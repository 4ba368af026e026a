//go:build windows

package refagent

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// detach gives cmd its own process group, out of reach of a console
// control event sent to the agent's group. A Job Object the agent runs in
// still holds it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}
