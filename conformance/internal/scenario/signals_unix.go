//go:build unix

package scenario

import (
	"os"

	"golang.org/x/sys/unix"
)

// reportedSignals are the signals a client may send its agent. SIGPIPE is
// among them so a write to a client that stopped reading fails with an
// error the grader hears of, instead of killing the agent silently.
var reportedSignals = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGPIPE}

// signalName names s as reports do.
func signalName(s os.Signal) string {
	if us, ok := s.(unix.Signal); ok {
		return unix.SignalName(us)
	}
	return s.String()
}
