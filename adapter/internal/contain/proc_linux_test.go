package contain

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestTD16_ParseStat(t *testing.T) {
	// Fields 7 to 21, then starttime (22) and two more.
	tail := strings.Repeat(" 0", 15) + " 141730 3133440 413"
	st, err := parseStat([]byte("21829 (cat) R 21826 21826 7731" + tail + "\n"))
	require.NoError(t, err)
	assert.Equal(t, stat{Proc: Proc{PID: 21829, PPID: 21826, Start: 141730}, State: 'R'}, st)

	// comm may hold spaces and parentheses: the fields count from the last ')'.
	st, err = parseStat([]byte("7 (a) b (c)) Z 1 7 7" + tail))
	require.NoError(t, err)
	assert.Equal(t, stat{Proc: Proc{PID: 7, PPID: 1, Start: 141730}, State: 'Z'}, st)

	for _, bad := range []string{"", "(x) R 1", "1 (x) R 1 2", "x (x) R 1" + tail, "1 (x) R -1" + tail, "1 (x) RR 1" + tail, "1 (x) R 1 1 1" + strings.Repeat(" 0", 15) + " no"} {
		_, err := parseStat([]byte(bad))
		assert.ErrorIs(t, err, errBadStat, "%q", bad)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("21829 (cat) R 21826 21826 7731 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 141730 3133440 413"))
	f.Add([]byte("7 (a) b (c)) Z 1 7 7"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err == nil {
			assert.Positive(t, st.PID)
			assert.GreaterOrEqual(t, st.PPID, 0)
		}
	})
}

func TestTD16_LookupSeesThisProcessAndItsZombie(t *testing.T) {
	p, zombie, err := Lookup(os.Getpid())
	require.NoError(t, err)
	assert.False(t, zombie)
	assert.Equal(t, os.Getppid(), p.PPID)
	assert.True(t, Alive(p.Key()))
	assert.False(t, Alive(Key{PID: p.PID, Start: p.Start + 1}), "another start is another process")

	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	child, _, err := Lookup(cmd.Process.Pid)
	require.NoError(t, err)
	// Until it is reaped an ended child is a zombie: not alive.
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil))
	_, zombie, err = Lookup(cmd.Process.Pid)
	require.NoError(t, err)
	assert.True(t, zombie)
	assert.False(t, Alive(child.Key()))
	require.NoError(t, cmd.Wait())
	_, _, err = Lookup(cmd.Process.Pid)
	assert.ErrorIs(t, err, errGone)
}
