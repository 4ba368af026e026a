//go:build unix

package check

import (
	"bytes"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// processAlive reports whether pid names a running process. A zombie (it
// exited and is waiting to be reaped) is not running; on Linux /proc tells
// them apart.
func processAlive(pid int) bool {
	if pid <= 0 || unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	if runtime.GOOS == "linux" {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil {
			// The state follows the command name, which is in parentheses.
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
				return stat[i+2] != 'Z' && stat[i+2] != 'X'
			}
		}
	}
	return true
}
