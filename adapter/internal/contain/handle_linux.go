package contain

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// handle refers to one process for as long as it is open: a pidfd. A
// signal sent through it reaches that process or none, never another
// that took its pid after it was reaped (TD-16).
type handle struct{ fd int }

// openHandle opens a handle on the process k names. The identity is
// checked after the pidfd is open: the pidfd pins the process that had
// the pid then, so a start that matches proves it is k's. errGone when
// no such process exists any more.
func openHandle(k Key) (handle, error) {
	fd, err := unix.PidfdOpen(k.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return handle{}, errGone
		}
		return handle{}, fmt.Errorf("contain: pidfd_open %d: %w", k.PID, err)
	}
	p, _, err := Lookup(k.PID)
	if err != nil || p.Start != k.Start {
		_ = unix.Close(fd)
		return handle{}, errGone
	}
	return handle{fd: fd}, nil
}

// signal sends sig to the process; one that has ended ignores it.
func (h handle) signal(sig unix.Signal) error {
	return unix.PidfdSendSignal(h.fd, sig, nil, 0)
}

func (h handle) close() { _ = unix.Close(h.fd) }

// awaitExit waits until every process of hs has ended (a pidfd becomes
// readable then), or until deadline. It returns how many had not.
func awaitExit(hs []handle, deadline time.Time) int {
	fds := make([]unix.PollFd, 0, len(hs))
	for _, h := range hs {
		fds = append(fds, unix.PollFd{Fd: int32(h.fd), Events: unix.POLLIN})
	}
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		ms := int((left + time.Millisecond - 1) / time.Millisecond)
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		alive := fds[:0]
		for _, fd := range fds {
			if fd.Revents == 0 {
				alive = append(alive, fd)
			}
		}
		fds = alive
	}
	return len(fds)
}

// trackingAvailable reports why the tracked set cannot work here, or nil:
// it needs /proc and pidfds (Linux 5.3).
func trackingAvailable() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("no pidfds (Linux 5.3 or later is needed): %w", err)
	}
	_ = unix.Close(fd)
	if _, err := os.Stat(procRoot + "/self/stat"); err != nil {
		return fmt.Errorf("no /proc: %w", err)
	}
	return nil
}
