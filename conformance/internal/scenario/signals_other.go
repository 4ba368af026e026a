//go:build !unix

package scenario

import (
	"os"
	"syscall"
)

// reportedSignals are the signals a client may send its agent; on Windows
// a console control event (CTRL_C_EVENT, CTRL_BREAK_EVENT) arrives as
// os.Interrupt and closing the console as SIGTERM.
var reportedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalName names s as reports do.
func signalName(s os.Signal) string {
	if s == os.Interrupt {
		return "interrupt (console control event)"
	}
	return s.String()
}
