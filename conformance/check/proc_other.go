//go:build !unix && !windows

package check

import (
	"errors"
	"os"
	"os/exec"
)

// isolate has no process groups to set up on this platform.
func isolate(*exec.Cmd) {}

// terminate has no graceful signal on this platform.
func terminate(int) error { return errors.New("no graceful termination signal on this platform") }

// killGroup kills the agent process itself.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// signalName names the graceful signal in reports.
const signalName = "graceful termination"
