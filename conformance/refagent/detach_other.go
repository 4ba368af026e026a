//go:build !unix && !windows

package refagent

import "os/exec"

// detach has no process groups to leave on this platform.
func detach(*exec.Cmd) {}
