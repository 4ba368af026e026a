//go:build linux || darwin

package launch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"acpkit.dev/adapter/internal/contain"
)

// layers are the containment layers the tree tests run under: the
// cgroup (where this machine lets a cgroup be made: as root, as in CI)
// and the tracked set, forced by its mode.
var layers = []struct {
	name string
	cfg  contain.Config
	mech contain.Mechanism
}{
	{"cgroup", contain.Config{}, contain.Cgroup},
	{"tracked", contain.Config{Mode: contain.Tracked}, contain.TrackedSet},
}

// requireLayer skips a cgroup test where no cgroup can be made (never in
// CI, which runs as root) and checks the launch got the layer asked for.
func requireLayer(t *testing.T, p *Process, want contain.Mechanism) {
	t.Helper()
	got, _ := p.Containment()
	if want == contain.Cgroup && got != contain.Cgroup && os.Getenv("CI") == "" && os.Geteuid() != 0 {
		t.Skipf("no cgroup can be created here (containment chose %q)", got)
	}
	require.Equal(t, want, got)
}

// teardown runs §19's process steps at this level: the graceful signal
// and stdin closed (TD-3, TD-4), the exit awaited for grace (TD-5), the
// group kill with the containment kill behind it (TD-6, TD-15), the reap,
// the read ends closed, and the release, which waits until nothing
// contained is alive.
func teardown(t *testing.T, s started, grace time.Duration) {
	t.Helper()
	s.Terminate()
	s.CloseStdin()
	select {
	case <-s.Exited():
	case <-time.After(grace):
	}
	s.Kill()
	s.waitExit(t)
	_ = s.Stdout().Close()
	_ = s.Stderr().Close()
	s.Release()
}

// treeKeys reads the tree's "pid N" lines up to "ready" and names each
// process by pid and start while it is certainly running.
func (s started) treeKeys(t *testing.T, want int) []contain.Key {
	t.Helper()
	var keys []contain.Key
	ready := false
	for !ready || len(keys) < want {
		l := s.line(t)
		if l == "ready" {
			ready = true
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(l, "pid "))
		require.NoError(t, err, l)
		p, zombie, err := contain.Lookup(pid)
		require.NoError(t, err)
		require.False(t, zombie)
		keys = append(keys, p.Key())
	}
	return keys
}

// requireGone checks that no process of keys runs any more, then reaps
// the ones this process adopted as subreaper.
func requireGone(t *testing.T, keys []contain.Key) {
	t.Helper()
	for _, k := range keys {
		assert.False(t, contain.Alive(k), "pid %d is still running", k.PID)
	}
	for _, k := range keys {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(k.PID, &ws, 0, nil) // ECHILD: not ours to reap
	}
}

// TD-15 with real processes: the runtime leaves a tool command in a
// session of its own with a child, and a double-forked daemon init (here
// this test, as subreaper) adopted; then it (a) ends on its own, (b) is
// SIGKILLed while the command runs, or (c) ignores SIGTERM. Whatever the
// layer, nothing of its tree runs once the release returns.
func TestTD15_NothingOfTheTreeOutlivesTeardown(t *testing.T) {
	for _, layer := range layers {
		for _, mode := range []string{"tree-end", "tree-block", "tree-trapterm"} {
			t.Run(layer.name+"/"+mode, func(t *testing.T) {
				// The tracked set finds a descendant with an empty
				// environment through its parent only; the runtime lives
				// to the teardown only in (c).
				scrub := layer.mech == contain.Cgroup || mode == "tree-trapterm"
				var env []string
				if scrub {
					env = append(env, treeScrubEnv+"=1")
				}
				spec := helperSpec(t, mode, env...)
				spec.Contain = layer.cfg
				s := launch(t, t.Context(), spec)
				requireLayer(t, s.Process, layer.mech)
				want := 3
				if scrub {
					want++
				}
				keys := s.treeKeys(t, want)
				runtime, _, err := contain.Lookup(s.pid)
				require.NoError(t, err)
				switch mode {
				case "tree-end": // (a): ends on its own once stdin closes
					s.CloseStdin()
					assert.Equal(t, ExitStatus{Code: 0}, s.waitExit(t))
				case "tree-block": // (b): killed from outside, mid-command
					require.NoError(t, unix.Kill(s.pid, unix.SIGKILL))
					assert.Equal(t, "killed", s.waitExit(t).Signal)
				}
				for _, k := range keys {
					require.True(t, contain.Alive(k), "pid %d runs until the teardown", k.PID)
				}
				teardown(t, s, 100*time.Millisecond)
				requireGone(t, append(keys, runtime.Key()))
			})
		}
	}
}

// captureLog keeps the records a launch writes.
type captureLog struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (c *captureLog) Enabled(context.Context, slog.Level) bool { return true }
func (c *captureLog) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
	return nil
}
func (c *captureLog) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captureLog) WithGroup(string) slog.Handler      { return c }

// chosen returns the attributes of every LogChosen record.
func (c *captureLog) chosen() []map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]string
	for _, r := range c.recs {
		if r.Message != contain.LogChosen {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

func TestTD15_ChoiceLoggedOncePerLaunch(t *testing.T) {
	for _, tc := range []struct {
		cfg  contain.Config
		want map[string]string
	}{
		{contain.Config{Mode: contain.Tracked}, map[string]string{"mechanism": "tracked", "reason": "containment is set to tracked"}},
		{contain.Config{Mode: contain.Off}, map[string]string{"mechanism": "process group", "reason": contain.ReasonOff}},
		{contain.Config{CgroupParent: t.TempDir()}, map[string]string{"mechanism": "tracked"}},
	} {
		var c captureLog
		spec := helperSpec(t, "block")
		spec.Contain, spec.Log = tc.cfg, slog.New(&c)
		s := launch(t, t.Context(), spec)
		require.Equal(t, "ready", s.line(t))
		recs := c.chosen()
		require.Len(t, recs, 1, "%+v", tc.cfg)
		tc.want["level"], tc.want["pid"] = "INFO", s.PID()
		if tc.cfg.CgroupParent != "" {
			assert.Contains(t, recs[0]["reason"], "no cgroup: "+tc.cfg.CgroupParent+" is not a cgroup v2 directory")
			tc.want["reason"] = recs[0]["reason"]
		}
		assert.Equal(t, tc.want, recs[0])
		teardown(t, s, time.Millisecond)
		assert.Len(t, c.chosen(), 1, "once")
	}
}

// The release never runs twice, and a kill after it does nothing: the
// cgroup is gone and the tracked set no longer tracked.
func TestTD15_KillAfterReleaseIsHarmless(t *testing.T) {
	for _, layer := range layers {
		t.Run(layer.name, func(t *testing.T) {
			spec := helperSpec(t, "block")
			spec.Contain = layer.cfg
			s := launch(t, t.Context(), spec)
			requireLayer(t, s.Process, layer.mech)
			require.Equal(t, "ready", s.line(t))
			teardown(t, s, time.Millisecond)
			_, dir := s.Containment()
			if dir != "" {
				assert.NoDirExists(t, dir)
			}
			s.Kill()
			s.Release()
		})
	}
}

// A start that fails is reported as before and leaves no cgroup: its
// retry with the tracked set failed the same way.
func TestSP4_TD15_FailedStartLeavesNoContainment(t *testing.T) {
	dir := t.TempDir()
	var c captureLog
	_, err := Local{}.Launch(t.Context(), Spec{Program: dir, Dir: dir, Log: slog.New(&c)})
	f := requireFault(t, err, "port_exit", MsgStart)
	assert.True(t, errors.Is(f, os.ErrPermission) || errors.Is(f, unix.EISDIR) || errors.Is(f, unix.EACCES), "%v", f)
	assert.Empty(t, c.chosen(), "nothing started, nothing chosen")
}
