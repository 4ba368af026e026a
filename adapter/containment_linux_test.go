package adapter

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"acpkit.dev/adapter/internal/contain"
	"acpkit.dev/adapter/internal/fakeagent"
)

// TD-15 through the adapter, with real processes: a runtime leaves a tool
// command in a session of its own with a child, and a double-forked daemon
// init adopted, then (a) ends as the session stops, (b) is SIGKILLed while
// the command runs, or (c) ignores SIGTERM. Under the cgroup (as root, as
// in CI) and the tracked set alike, none of them runs once StopSession
// has returned.
func TestTD15_NoDescendantOutlivesStopSession(t *testing.T) {
	for _, layer := range []struct {
		name string
		c    Containment
		mech contain.Mechanism
	}{
		{"cgroup", ContainmentAuto, contain.Cgroup},
		{"tracked", ContainmentTracked, contain.TrackedSet},
	} {
		for _, tc := range []struct {
			name   string
			args   []string
			prompt string
		}{
			{"ends", nil, "tree"},
			{"killed-mid-command", nil, "tree hang"},
			{"ignores-sigterm", []string{"ignore-term", "no-eof-exit"}, "tree"},
		} {
			t.Run(layer.name+"/"+tc.name, func(t *testing.T) {
				hs, err := fakeagent.NewHolders()
				require.NoError(t, err)
				t.Cleanup(func() { hs.Release() })
				h := newHarness(t, WithContainment(layer.c))
				p := h.params(append(tc.args, "holder="+hs.Path)...)
				p.Agent.StopGraceMS = 200
				s := h.startWith(p)
				mech, _ := s.s.proc.Containment()
				if layer.mech == contain.Cgroup && mech != contain.Cgroup && os.Geteuid() != 0 && os.Getenv("CI") == "" {
					t.Skipf("no cgroup can be created here (containment chose %q)", mech)
				}
				require.Equal(t, layer.mech, mech)

				turn := make(chan error, 1)
				go func() { _, err, _ := h.turn(s, tc.prompt); turn <- err }()
				require.NoError(t, hs.Wait(3, 20*time.Second))
				var keys []contain.Key
				for _, pid := range hs.PIDs() {
					p, zombie, err := contain.Lookup(pid)
					require.NoError(t, err)
					require.False(t, zombie)
					keys = append(keys, p.Key())
				}
				pid, err := strconv.Atoi(s.AgentPID)
				require.NoError(t, err)
				runtime, _, err := contain.Lookup(pid)
				require.NoError(t, err)
				if tc.name == "killed-mid-command" {
					require.NoError(t, unix.Kill(runtime.PID, unix.SIGKILL))
					assert.Equal(t, KindPortExit, KindOf(<-turn))
				} else {
					require.NoError(t, <-turn)
				}

				require.NoError(t, h.a.StopSession(context.Background(), s))
				for _, k := range append(keys, runtime.Key()) {
					assert.False(t, contain.Alive(k), "pid %d runs after StopSession", k.PID)
				}
			})
		}
	}
}

// The seed's own case (TD-12's detached holder) with containment on, the
// default: the descendant that left the group is gone with the session.
func TestTD12_TD15_DetachedHolderGoneWithTheSession(t *testing.T) {
	h, s, hs := holderSession(t, true)
	_, err, _ := h.turn(s, "holder")
	require.Error(t, err)
	require.NoError(t, hs.Wait(1, 5*time.Second))
	holder, _, err := contain.Lookup(hs.PIDs()[0])
	require.NoError(t, err)
	took := h.stopTimed(context.Background(), s)
	assert.False(t, contain.Alive(holder.Key()))
	assert.Less(t, took, 2*time.Second+3*h.a.drain+time.Second, "TD-13 still bounds it")
}

// The choice is logged once per session, with the adapter's component.
func TestTD15_ContainmentLoggedOncePerSession(t *testing.T) {
	for _, c := range Containments {
		h := newHarness(t, WithContainment(c))
		s := h.start()
		recs := h.log.find(contain.LogChosen)
		require.Len(t, recs, 1, c)
		r := recs[0]
		assert.Equal(t, componentAttr, r.Attrs["component"])
		assert.Equal(t, s.AgentPID, r.Attrs["pid"])
		switch c {
		case ContainmentOff:
			assert.Equal(t, "process group", r.Attrs["mechanism"])
			assert.Equal(t, contain.ReasonOff, r.Attrs["reason"])
		case ContainmentTracked:
			assert.Equal(t, "tracked", r.Attrs["mechanism"])
		default:
			assert.Contains(t, []string{"cgroup", "tracked"}, r.Attrs["mechanism"])
		}
		h.stop(s)
		assert.Len(t, h.log.find(contain.LogChosen), 1, "once")
	}
}
