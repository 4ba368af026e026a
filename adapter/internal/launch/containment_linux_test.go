package launch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"acpkit.dev/adapter/internal/contain"
)

// Containment off is the seed's mechanism: a descendant that left the
// group survives the group kill (TD-12).
func TestTD12_TD15_OffLeavesTheDetachedDescendant(t *testing.T) {
	spec := helperSpec(t, "tree-end")
	spec.Contain = contain.Config{Mode: contain.Off}
	s := launch(t, t.Context(), spec)
	requireLayer(t, s.Process, contain.ProcessGroup)
	keys := s.treeKeys(t, 3)
	s.CloseStdin()
	s.waitExit(t)
	teardown(t, s, 100*time.Millisecond)
	for _, k := range keys {
		assert.True(t, contain.Alive(k), "pid %d left the group and survives", k.PID)
	}
	killAndAwait(t, keys)
	requireGone(t, keys)
}

// killAndAwait kills each process of keys through a pidfd and waits until
// each has ended.
func killAndAwait(t *testing.T, keys []contain.Key) {
	t.Helper()
	for _, k := range keys {
		fd, err := unix.PidfdOpen(k.PID, 0)
		require.NoError(t, err)
		p, _, err := contain.Lookup(k.PID)
		require.NoError(t, err)
		require.Equal(t, k, p.Key())
		require.NoError(t, unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0))
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(ioBound/time.Millisecond))
			if err == unix.EINTR {
				continue
			}
			require.NoError(t, err)
			require.Equal(t, 1, n, "pid %d did not end", k.PID)
			break
		}
		require.NoError(t, unix.Close(fd))
	}
}

// privateCgroupParent makes a cgroup under this process's own for one
// test's sessions, so the test can see every directory they leave; it is
// removed at cleanup. It skips where no cgroup can be made (never in CI,
// which runs as root).
func privateCgroupParent(t *testing.T) string {
	t.Helper()
	own, err := contain.OwnCgroup()
	if err == nil {
		var dir string
		if dir, err = os.MkdirTemp(own, "acpkit-test-"); err == nil {
			t.Cleanup(func() { assert.NoError(t, os.Remove(dir)) })
			return dir
		}
	}
	if os.Getenv("CI") != "" || os.Geteuid() == 0 {
		t.Fatalf("root must be able to create a cgroup: %v", err)
	}
	t.Skipf("no cgroup can be created here: %v", err)
	return ""
}

// cgroupsUnder lists the directories under parent.
func cgroupsUnder(t *testing.T, parent string) []string {
	t.Helper()
	ents, err := os.ReadDir(parent)
	require.NoError(t, err)
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// 200 sessions in a row, each leaving a setsid'd process the group kill
// misses: every one is killed with its cgroup, and no cgroup directory is
// left behind.
func TestTD15_TwoHundredSessionsLeaveNoCgroup(t *testing.T) {
	parent := privateCgroupParent(t)
	spec := Spec{
		Program: "/bin/sh",
		Args:    []string{"-c", "setsid sleep 1000 & exec sleep 1000"},
		Dir:     t.TempDir(),
		Contain: contain.Config{CgroupParent: parent},
	}
	for i := range 200 {
		p, err := Local{}.Launch(t.Context(), spec)
		require.NoError(t, err)
		mech, dir := p.Containment()
		require.Equal(t, contain.Cgroup, mech, "session %d", i)
		require.Equal(t, parent, filepath.Dir(dir))
		s := started{Process: p}
		teardown(t, s, time.Second)
		require.NoDirExists(t, dir, "session %d", i)
	}
	assert.Empty(t, cgroupsUnder(t, parent))
}

// A start that fails leaves no cgroup behind, whether the cgroup or the
// program made it fail.
func TestSP4_TD15_FailedStartLeavesNoCgroup(t *testing.T) {
	parent := privateCgroupParent(t)
	dir := t.TempDir()
	_, err := Local{}.Launch(t.Context(), Spec{Program: dir, Dir: dir, Contain: contain.Config{CgroupParent: parent}})
	requireFault(t, err, "port_exit", MsgStart)
	assert.Empty(t, cgroupsUnder(t, parent))
}
