//go:build unix

package refagent

import (
	"os/exec"
	"syscall"
)

// detach puts cmd in its own process group, out of reach of a signal sent
// to the agent's group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
