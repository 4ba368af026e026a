package contain

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sleeper starts `sleep 1000` as this process's child, reaped at cleanup.
func sleeper(t *testing.T, env ...string) Proc {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.Env = env
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	p, _, err := Lookup(cmd.Process.Pid)
	require.NoError(t, err)
	return p
}

// shellRuntime runs script under sh as a stand-in runtime and returns it
// with the pid the script prints first.
func shellRuntime(t *testing.T, script string) (root Proc, printed int, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command("sh", "-c", script)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	printed, err = strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	root, _, err = Lookup(cmd.Process.Pid)
	require.NoError(t, err)
	return root, printed, cmd
}

// assertRunning checks that pid is neither gone, ended nor stopped.
func assertRunning(t *testing.T, pid int, msg ...any) {
	t.Helper()
	st, err := readStat(pid)
	require.NoError(t, err, msg...)
	assert.NotContains(t, "TtZX", string(st.State), msg...)
}

// staleSource replays a read that saw the process at pid as another one:
// its entry is replaced by as, on every read, as if the table were read
// just before the pid was reused.
type staleSource struct {
	pid int
	as  Proc
}

func (s staleSource) list() ([]Proc, error) {
	procs, err := listProcs()
	for i := range procs {
		if procs[i].PID == s.pid {
			procs[i] = s.as
		}
	}
	return procs, err
}

func (staleSource) token(p Proc) (string, bool) { return readToken(p), true }

// The tracked set believes pid P is a descendant it saw, but P now belongs
// to an unrelated process: nothing is sent to it, because every signal
// goes through a pidfd whose process is checked against the start the set
// recorded. The stale read is injected, so no pid has to be reused by luck.
func TestTD16_ReusedPidNeverSignalled(t *testing.T) {
	unrelated := sleeper(t)
	root, _, rootCmd := shellRuntime(t, "echo 0; exec sleep 1000")
	// What the stale read claims: a process at the unrelated one's pid
	// that started after the runtime (start times count clock ticks, so
	// the unrelated one, started first, may share the runtime's tick but
	// never a later one).
	ghost := Key{PID: unrelated.PID, Start: root.Start + 1}
	s := newScanner(staleSource{pid: unrelated.PID, as: Proc{PID: unrelated.PID, PPID: root.PID, Start: ghost.Start}}, time.Hour)
	tr, err := s.track(root.PID, "")
	require.NoError(t, err)
	tr.refresh()
	s.mu.Lock()
	assert.True(t, tr.known[ghost], "the stale read made the pid a tracked descendant")
	s.mu.Unlock()

	tr.kill()
	s.mu.Lock()
	_, held := tr.held[ghost]
	_, rootHeld := tr.held[root.Key()]
	s.mu.Unlock()
	assert.False(t, held, "no handle on a process whose start differs")
	assert.True(t, rootHeld)
	assert.Zero(t, tr.release(time.Now().Add(time.Minute)))

	assert.Error(t, rootCmd.Wait(), "the runtime was killed")
	assert.True(t, Alive(unrelated.Key()), "the unrelated process lives")
	assertRunning(t, unrelated.PID, "and was not even stopped")
}

// openHandle itself refuses a key whose start is not the process's.
func TestTD16_HandleRefusesAnotherStart(t *testing.T) {
	p := sleeper(t)
	_, err := openHandle(Key{PID: p.PID, Start: p.Start + 1})
	assert.ErrorIs(t, err, errGone)
	h, err := openHandle(p.Key())
	require.NoError(t, err)
	h.close()
	assertRunning(t, p.PID)
}

// What the kill reaches: a descendant in a session of its own with its
// environment cleared (found through its parent), a process carrying the
// session's token that is no descendant any more (a daemon init adopted),
// and the runtime; not a young process with neither.
func TestTD15_TrackedSetByParentAndByToken(t *testing.T) {
	const token = "tok-1"
	root, child, rootCmd := shellRuntime(t, "env -i setsid sleep 1000 & echo $!; exec sleep 1000")
	adopted := sleeper(t, EnvToken+"="+token)
	bystander := sleeper(t, EnvToken+"=another")
	s := newScanner(newPlatformSource(), time.Hour)
	tr, err := s.track(root.PID, token)
	require.NoError(t, err)
	c, _, err := Lookup(child)
	require.NoError(t, err)
	assert.Equal(t, root.PID, c.PPID)

	tr.kill()
	assert.Zero(t, tr.release(time.Now().Add(time.Minute)))
	assert.Error(t, rootCmd.Wait())
	assert.False(t, Alive(c.Key()), "the setsid child without the token")
	assert.False(t, Alive(adopted.Key()), "the token carrier")
	assert.True(t, Alive(bystander.Key()))
	assertRunning(t, bystander.PID)
}

// The interval's reads track a descendant while its parent lives, so it is
// killed after the parent died and init adopted it, even without the token.
func TestTD15_TrackedSetKeepsWhatItSawAfterOrphaning(t *testing.T) {
	root, child, rootCmd := shellRuntime(t, "env -i setsid sleep 1000 & echo $!; exec sleep 1000")
	c, _, err := Lookup(child)
	require.NoError(t, err)
	scanned := make(chan struct{}, 1)
	s := newScanner(newPlatformSource(), time.Millisecond)
	s.scanned = func() {
		select {
		case scanned <- struct{}{}:
		default:
		}
	}
	tr, err := s.track(root.PID, "")
	require.NoError(t, err)
	for known := false; !known; {
		<-scanned
		s.mu.Lock()
		known = tr.known[c.Key()]
		s.mu.Unlock()
	}
	require.NoError(t, unix.Kill(root.PID, unix.SIGKILL))
	assert.Error(t, rootCmd.Wait())
	require.True(t, Alive(c.Key()), "orphaned, still running")

	assert.Zero(t, tr.release(time.Now().Add(time.Minute)))
	assert.False(t, Alive(c.Key()))
}

func TestTD15_ScannerRunsOnlyWhileTracking(t *testing.T) {
	s := newScanner(newPlatformSource(), time.Hour)
	root := sleeper(t)
	a, err := s.track(root.PID, "")
	require.NoError(t, err)
	b, err := s.track(root.PID, "")
	require.NoError(t, err)
	s.untrack(a)
	s.mu.Lock()
	assert.NotNil(t, s.stop, "one session is still tracked")
	s.mu.Unlock()
	s.untrack(b)
	s.mu.Lock()
	assert.Nil(t, s.stop)
	s.mu.Unlock()
}

// BenchmarkTD15_ReadProcessTable is one read of the process table, the
// cost the tracked set pays per interval for all its sessions together.
func BenchmarkTD15_ReadProcessTable(b *testing.B) {
	s := newScanner(newPlatformSource(), time.Hour)
	root := Proc{PID: 1}
	s.trackers[&tracker{s: s, root: root.Key(), known: map[Key]bool{}, held: map[Key]handle{}}] = struct{}{}
	for b.Loop() {
		s.mu.Lock()
		s.scanLocked()
		s.mu.Unlock()
	}
	procs, _ := listProcs()
	b.ReportMetric(float64(len(procs)), "processes")
}
