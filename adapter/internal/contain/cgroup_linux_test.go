package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybridMountinfo is this machine's kind of layout: cgroup v1 controllers
// under /sys/fs/cgroup and cgroup2 at /sys/fs/cgroup/unified.
const hybridMountinfo = `21 26 0:20 / /proc rw,relatime - proc proc rw
30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestTD15_Cgroup2MountsFromMountinfo(t *testing.T) {
	assert.Equal(t, []mount{{root: "/", point: "/sys/fs/cgroup/unified"}}, cgroup2Mounts([]byte(hybridMountinfo)))
	// Optional fields before the separator, a bind mount of a subtree, and
	// an escaped space in the mount point.
	info := "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 master:2 - cgroup2 cgroup2 rw,nsdelegate\n" +
		"90 35 0:30 /work.slice /srv/cg\\040x rw - cgroup2 none rw\n" +
		"91 35 0:31 / /mnt rw - ext4 /dev/sda1 rw\n" +
		"short line\n"
	assert.Equal(t, []mount{{root: "/", point: "/sys/fs/cgroup"}, {root: "/work.slice", point: "/srv/cg x"}}, cgroup2Mounts([]byte(info)))
	assert.Empty(t, cgroup2Mounts(nil))
}

func FuzzCgroup2Mounts(f *testing.F) {
	f.Add([]byte(hybridMountinfo))
	f.Add([]byte("90 35 0:30 /a\\134b /srv/cg\\040x rw - cgroup2 none rw\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range cgroup2Mounts(b) {
			assert.NotContains(t, m.point, "\n")
		}
	})
}

func TestTD15_UnifiedPath(t *testing.T) {
	p, ok := unifiedPath([]byte("9:name=systemd:/\n4:memory:/x/y\n0::/\n"))
	assert.True(t, ok)
	assert.Equal(t, "/", p)
	p, ok = unifiedPath([]byte("0::/system.slice/sortie.service\n"))
	assert.True(t, ok)
	assert.Equal(t, "/system.slice/sortie.service", p)
	_, ok = unifiedPath([]byte("4:memory:/x\n1:cpu:/\n"))
	assert.False(t, ok, "cgroup v1 only")
}

func TestTD15_ParsePopulated(t *testing.T) {
	for in, want := range map[string]bool{"populated 0\nfrozen 0\n": false, "frozen 1\npopulated 1\n": true} {
		got, err := parsePopulated([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, got, "%q", in)
	}
	_, err := parsePopulated([]byte("frozen 0\n"))
	assert.ErrorIs(t, err, errNoPopulated)
	_, err = parsePopulated([]byte("populated yes\n"))
	assert.Error(t, err)
}

func FuzzParsePopulated(f *testing.F) {
	f.Add([]byte("populated 1\nfrozen 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		populated, err := parsePopulated(b)
		if err != nil {
			assert.False(t, populated)
		}
	})
}

func TestTD15_CgroupParentMustBeCgroup2(t *testing.T) {
	dir := t.TempDir()
	_, err := newCgroup(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir+" is not a cgroup v2 directory")
	_, err = newCgroup(filepath.Join(dir, "missing"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cgroup parent")
	s := Choose(Config{CgroupParent: dir}, nil)
	defer s.Abandon()
	assert.Equal(t, TrackedSet, s.Mechanism(), "auto falls back to the tracked set")
	assert.Contains(t, s.reason, "no cgroup: "+dir+" is not a cgroup v2 directory")
}

// ownCgroupOrSkip creates a cgroup under this process's own, or skips
// when this machine does not let it (not root, no delegation). CI runs
// as root, where it must work.
func ownCgroupOrSkip(t *testing.T) *cgroup {
	t.Helper()
	cg, err := newCgroup("")
	if err != nil {
		if os.Geteuid() == 0 && os.Getenv("CI") != "" {
			t.Fatalf("root in CI must be able to create a cgroup: %v", err)
		}
		t.Skipf("no cgroup can be created here: %v", err)
	}
	return cg
}

func TestTD15_CgroupLifecycle(t *testing.T) {
	cg := ownCgroupOrSkip(t)
	assert.True(t, strings.HasPrefix(filepath.Base(cg.dir), "acpkit-"))
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: cg.fd}
	require.NoError(t, cmd.Start())
	cg.closeFD()
	procs, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	require.NoError(t, err)
	assert.Equal(t, []string{strconv.Itoa(cmd.Process.Pid)}, strings.Fields(string(procs)), "started inside")

	// Not empty yet: the bounded wait says so.
	empty, err := cg.awaitEmpty(time.Now())
	require.NoError(t, err)
	assert.False(t, empty)
	assert.Error(t, cg.remove(), "a populated cgroup cannot go")

	require.NoError(t, cg.kill())
	empty, err = cg.awaitEmpty(time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.True(t, empty)
	assert.Error(t, cmd.Wait())
	require.NoError(t, os.Mkdir(filepath.Join(cg.dir, "nested"), 0o755), "a cgroup the runtime made inside")
	require.NoError(t, cg.remove())
	assert.NoDirExists(t, cg.dir)
}
