package launch

import "golang.org/x/sys/unix"

// becomeSubreaper makes this test process adopt orphaned descendants, so a
// test can reap a detached grandchild itself instead of leaving a zombie
// to an init that may not reap (as in containers).
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
