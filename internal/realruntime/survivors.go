//go:build linux

package realruntime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// AssertGone fails t if a process of the runtime's tree is still alive
// once each has had up to bound to finish exiting (see Gone).
func (r Runtime) AssertGone(t testing.TB, bound time.Duration) {
	t.Helper()
	if left := r.Gone(bound); len(left) > 0 {
		t.Errorf("%s: processes of the runtime's tree outlived it: %v", r.Kind, left)
	}
}

// Gone gives each live process of the runtime's tree up to bound to
// finish exiting (a process killed with its group may take a moment) and
// returns those still alive, each described by its pid, session and
// command line. It waits on each process's pidfd, not on a clock.
func (r Runtime) Gone(bound time.Duration) []string {
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
	var left []string
	for _, pid := range r.Survivors() {
		left = append(left, describe(pid))
	}
	return left
}

// killSurvivors SIGKILLs what is left of the runtime's tree, through
// pidfds so a pid reused meanwhile is never signalled: a test that shows
// leftovers must not leave them on the machine.
func (r Runtime) killSurvivors() {
	for _, pid := range r.Survivors() {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if r.marked(pid) { // still the process found, not a reused pid
			if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
				awaitEnd(fd)
			}
		}
		_ = unix.Close(fd)
	}
}

// awaitEnd waits until the process of pidfd fd has ended (the pidfd turns
// readable then), at most killBound: a SIGKILL is delivered at once, but
// the process ends a moment later, and a caller asking Survivors next
// must not find it.
func awaitEnd(fd int) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, int(killBound/time.Millisecond)); err != unix.EINTR {
			return
		}
	}
}

// killBound bounds the wait for a killed process to end.
const killBound = 10 * time.Second

// OutsideGroup describes the live processes of the runtime's tree that
// run outside the process group pgid (the runtime's own, which the
// adapter's group kill reaches): a shell command the runtime started in a
// session of its own, which only containment ends (issue #24).
func (r Runtime) OutsideGroup(pgid int) []string {
	var out []string
	for _, pid := range r.Survivors() {
		if g, err := unix.Getpgid(pid); err == nil && g != pgid {
			out = append(out, describe(pid))
		}
	}
	return out
}

// Matching describes the live processes of the runtime's tree whose
// command line holds word.
func (r Runtime) Matching(word string) []string {
	var out []string
	for _, pid := range r.Survivors() {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.Contains(string(cmdline), word) {
			out = append(out, describe(pid))
		}
	}
	return out
}
