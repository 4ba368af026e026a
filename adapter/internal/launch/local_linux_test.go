package launch

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// reapOrphan waits for a grandchild this process adopted as subreaper.
func reapOrphan(t *testing.T, pid int) {
	t.Helper()
	var ws unix.WaitStatus
	_, err := unix.Wait4(pid, &ws, 0, nil)
	require.NoError(t, err)
}

func TestTD12_DetachedDescendantSurvivesGroupKill(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "spawn-detached"))
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	s.waitExit(t)

	s.Kill()
	// Not a defect: it left the group, so the group kill cannot reach it.
	require.NoError(t, unix.Kill(gpid, 0), "detached descendant is alive")
	assert.True(t, s.stdoutOpen(t), "and still holds stdout")

	require.NoError(t, unix.Kill(gpid, unix.SIGKILL))
	reapOrphan(t, gpid)
	assert.False(t, s.stdoutOpen(t))
}
