package launch

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// becomeSubreaper makes this test process adopt orphaned descendants, so a
// test can reap a grandchild itself instead of leaving a zombie to an init
// that may not reap (as in some containers).
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// reapOrphan waits for a grandchild this process adopted as subreaper.
func reapOrphan(t *testing.T, pid int) {
	t.Helper()
	var ws unix.WaitStatus
	_, err := unix.Wait4(pid, &ws, 0, nil)
	require.NoError(t, err)
}
