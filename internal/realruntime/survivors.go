//go:build linux

package realruntime

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// AssertGone fails t if a process of the runtime's tree is still alive
// once each has had up to bound to finish exiting (a process killed with
// its group may take a moment). It waits on each process's pidfd, not on
// a clock.
func (r Runtime) AssertGone(t testing.TB, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for _, pid := range r.Survivors() {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone already
		}
		ms := max(int(time.Until(deadline)/time.Millisecond), 0)
		_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		_ = unix.Close(fd)
	}
	if left := r.Survivors(); len(left) > 0 {
		t.Errorf("%s: processes of the runtime's tree outlived it: %v", r.Kind, left)
	}
}
