//go:build unix

package adapter

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/launch"
)

// Bounds of the stress test: a start over slowStart has its debug log
// printed; one still running at stuckStart gets both sides' goroutines
// dumped into that log (this process's, and the agent's through SIGQUIT,
// which its Go runtime writes to the stderr the adapter collects), which
// also ends it.
const (
	slowStart  = time.Second
	stuckStart = 10 * time.Second
)

// The real-process start stress test's sizes (Unix only, like the test).
var (
	stressStarts = flag.Int("stress-starts", 20, "real starts TestSS1_StartsUnderCPUHogs makes")
	stressHogs   = flag.Int("stress-hogs", 1, "goroutine and process CPU hogs (each) beside the real starts")
)

// TestSS1_StartsUnderCPUHogs looks for a lost wake-up in the start path
// (issue #15: one start timed out at the 30 s read timeout under heavy
// load): sequential starts and stops of the reference agent on two
// workers, beside goroutines and processes that only burn CPU. Every start
// must succeed; the slow ones are reported with the adapter's debug log.
func TestSS1_StartsUnderCPUHogs(t *testing.T) {
	bin := refagent(t)
	stopHogs := startHogs(t, *stressHogs)
	defer stopHogs()

	const workers = 2
	var (
		mu         sync.Mutex
		starts     []time.Duration
		teardowns  []time.Duration
		next       atomic.Int64
		wg         sync.WaitGroup
		failed     atomic.Bool
		slowReport []string
	)
	for range workers {
		w := newStressWorker(t, bin)
		wg.Go(func() {
			for next.Add(1) <= int64(*stressStarts) && !failed.Load() {
				st, td, log, err := w.startStop()
				mu.Lock()
				starts, teardowns = append(starts, st), append(teardowns, td)
				if st > slowStart || err != nil {
					slowReport = append(slowReport, fmt.Sprintf("start took %v (err %v); adapter debug log:\n%s", st, err, log))
				}
				mu.Unlock()
				if err != nil {
					failed.Store(true)
					t.Errorf("StartSession: %v", err)
				}
			}
		})
	}
	wg.Wait()
	for _, r := range slowReport {
		t.Log(r)
	}
	require.NotEmpty(t, starts)
	slices.Sort(starts)
	slices.Sort(teardowns)
	t.Logf("%d starts beside %d goroutine and %d process hogs: start median %v, p99 %v, max %v; teardown median %v, max %v; %d over %v",
		len(starts), *stressHogs, *stressHogs,
		starts[len(starts)/2], starts[len(starts)*99/100], starts[len(starts)-1],
		teardowns[len(teardowns)/2], teardowns[len(teardowns)-1], len(slowReport), slowStart)
}

// stressWorker starts and stops sessions one at a time, each with its own
// debug log.
type stressWorker struct {
	t      *testing.T
	a      *Adapter
	log    *lockedBuffer
	params StartParams
	// pid is the agent of the start in progress (0 before its launch).
	pid atomic.Int64
}

func newStressWorker(t *testing.T, bin string) *stressWorker {
	w := &stressWorker{t: t, log: &lockedBuffer{}}
	l := slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(nil, WithLogger(l), withLauncher(pidLauncher{inner: launch.Local{}, pid: &w.pid}))
	require.NoError(t, err)
	w.a = a
	w.params = StartParams{
		WorkspacePath: t.TempDir(),
		Agent:         AgentConfig{Kind: KindName, Command: bin},
	}
	return w
}

// startStop runs one start and its stop; log is the debug log of both.
func (w *stressWorker) startStop() (start, teardown time.Duration, log string, err error) {
	w.log.Reset()
	w.pid.Store(0)
	ctx := context.Background()
	dumped := make(chan struct{})
	stuck := time.AfterFunc(stuckStart, func() {
		defer close(dumped)
		w.dumpStuck()
	})
	t0 := time.Now()
	fmt.Fprintf(w.log, "--- %s StartSession called\n", t0.UTC().Format(time.RFC3339Nano))
	s, err := w.a.StartSession(ctx, w.params)
	start = time.Since(t0)
	if !stuck.Stop() {
		<-dumped // the whole dump is in the log
	}
	fmt.Fprintf(w.log, "--- %s StartSession returned (agent pid %d)\n", time.Now().UTC().Format(time.RFC3339Nano), w.pid.Load())
	if err == nil {
		t1 := time.Now()
		_ = w.a.StopSession(ctx, s)
		teardown = time.Since(t1)
	}
	return start, teardown, w.log.String(), err
}

// dumpStuck writes this process's goroutines into the worker's log and
// asks the agent for its own (SIGQUIT: the Go runtime prints every
// goroutine to stderr and exits, so the start ends as a lost connection).
func (w *stressWorker) dumpStuck() {
	fmt.Fprintf(w.log, "--- start still running after %v: adapter goroutines ---\n", stuckStart)
	_ = pprof.Lookup("goroutine").WriteTo(w.log, 2)
	if pid := w.pid.Load(); pid > 0 {
		fmt.Fprintf(w.log, "--- SIGQUIT to agent %d: its goroutines follow as agent stderr ---\n", pid)
		_ = syscall.Kill(int(pid), syscall.SIGQUIT)
	}
}

// pidLauncher records the pid of each process it launches.
type pidLauncher struct {
	inner launch.Launcher
	pid   *atomic.Int64
}

func (l pidLauncher) Launch(ctx context.Context, spec launch.Spec) (*launch.Process, error) {
	p, err := l.inner.Launch(ctx, spec)
	if err == nil {
		n, _ := strconv.Atoi(p.PID())
		l.pid.Store(int64(n))
	}
	return p, err
}

// startHogs starts n goroutines and n processes (this binary as cpuHog)
// that spin until the returned func stops them; it also reaps the
// processes.
func startHogs(t *testing.T, n int) func() {
	t.Helper()
	stopSpin := spin(n)
	exe, err := os.Executable()
	require.NoError(t, err)
	var procs []*exec.Cmd
	for range n {
		cmd := exec.Command(exe, cpuHogArg)
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
	}
	return func() {
		stopSpin()
		for _, cmd := range procs {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
}
