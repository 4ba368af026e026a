package contain

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// handle names one process. macOS has no pidfd, so each signal checks the
// start first: a pid reused between that check and the kill() right after
// it would be signalled, a window of one system call (TD-16 holds
// strictly only on Linux).
type handle struct{ k Key }

// openHandle returns a handle on the process k names, or errGone when no
// such process is alive.
func openHandle(k Key) (handle, error) {
	if !Alive(k) {
		return handle{}, errGone
	}
	return handle{k: k}, nil
}

// signal sends sig to the process if it is still the one the handle names.
func (h handle) signal(sig unix.Signal) error {
	p, _, err := Lookup(h.k.PID)
	if err != nil || p.Start != h.k.Start {
		return errGone
	}
	return unix.Kill(h.k.PID, sig)
}

func (h handle) close() {}

// exitPoll is how often awaitExit rereads the table: macOS offers no wait
// on a process that is not this one's child short of kqueue, and the
// processes waited for were killed, so the wait is short.
const exitPoll = 5 * time.Millisecond

// awaitExit waits until every process of hs has ended, or until deadline.
// It returns how many had not.
func awaitExit(hs []handle, deadline time.Time) int {
	left := hs
	for {
		alive := left[:0:0]
		for _, h := range left {
			if Alive(h.k) {
				alive = append(alive, h)
			}
		}
		left = alive
		if len(left) == 0 || !time.Now().Before(deadline) {
			return len(left)
		}
		time.Sleep(min(exitPoll, time.Until(deadline)))
	}
}

// trackingAvailable reports why the tracked set cannot work here, or nil.
func trackingAvailable() error {
	_, _, err := Lookup(os.Getpid())
	return err
}
