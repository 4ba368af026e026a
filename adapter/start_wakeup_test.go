package adapter

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/launch"
	referenceagent "acpkit.dev/conformance/refagent"
)

// The in-memory start stress test's sizes (the real starts' are in
// start_stress_test.go, unix only). make test runs the small defaults;
// `make stress-start` runs thousands of starts beside more hogs.
var (
	stressMemStarts = flag.Int("stress-mem-starts", 300, "in-memory starts TestSS1_InMemoryStartsWaitOnNoTimer makes")
	stressMemHogs   = flag.Int("stress-mem-hogs", 0, "goroutine CPU hogs beside the in-memory starts")
)

// TestSS1_InMemoryStartsWaitOnNoTimer runs whole starts and teardowns of the
// reference agent, in memory, inside a synctest bubble, with the agent's
// input and output split into writes of random sizes (a line arrives in
// pieces, so each reader sees partial lines and reads again). In a bubble
// time moves only when every goroutine is blocked, and nothing in a start
// waits on a timer: a wake-up lost anywhere between the agent's answer and
// StartSession's return (reader, inbox, ordered dispatch, pump, the call's
// completion) leaves everything blocked, the clock jumps to the read
// timeout and the start fails with "timed out waiting for a response" —
// issue #15's failure, at once instead of 30 s later. So every start must
// succeed and take no time at all on the bubble's clock; so must the
// teardown of this cooperative agent (no bound of §19 runs out).
//
// The hand-offs of a start call, and why none can drop its wake-up: the
// request goes to the writer over a channel (outq); the reader's bufio
// loop reads until a whole line is in; the reader hands the answer to the
// dispatcher through the inbox, whose pop re-checks the queue in a loop
// under the mutex that push holds while it appends and signals; the
// dispatcher hands it to the pump over a channel and then closes the
// call's done channel, which Call selects on; the pump got the staged
// facts (pumpStage) on that same channel before the request was written,
// so before the answer could be read. Only channels and a condition
// variable used under its mutex — the test checks that the code is that.
func TestSS1_InMemoryStartsWaitOnNoTimer(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("split seed %d", seed)
	defer spin(*stressMemHogs)()
	synctest.Test(t, func(t *testing.T) {
		log := &lockedBuffer{}
		l := &memLauncher{rng: rand.New(rand.NewPCG(seed, 0))}
		a, err := New(nil,
			WithLogger(slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			withLauncher(l))
		require.NoError(t, err)
		p := StartParams{WorkspacePath: dir, Agent: AgentConfig{Kind: KindName, Command: exe}}
		for i := range *stressMemStarts {
			log.Reset()
			t0 := time.Now()
			s, err := a.StartSession(context.Background(), p)
			if err != nil || time.Since(t0) != 0 {
				t.Fatalf("start %d: %v after %v on the bubble's clock; adapter debug log:\n%s", i, err, time.Since(t0), log.String())
			}
			require.Equal(t, "sess-1", s.ID)
			t1 := time.Now()
			require.NoError(t, a.StopSession(context.Background(), s))
			if time.Since(t1) != 0 {
				t.Fatalf("teardown %d took %v on the bubble's clock; adapter debug log:\n%s", i, time.Since(t1), log.String())
			}
		}
	})
}

// memLauncher runs the reference agent in memory: each launch is
// referenceagent.Serve on its own goroutine over three io.Pipes, its
// input and output cut into writes of 1 to 64 bytes.
type memLauncher struct {
	mu  sync.Mutex
	rng *rand.Rand
	pid atomic.Int64
}

func (l *memLauncher) Launch(_ context.Context, _ launch.Spec) (*launch.Process, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var stop sync.Once
	// A signal ends the agent as it ends a real one: its input is gone.
	signal := func(bool) {
		stop.Do(func() {
			cancel()
			_ = inR.Close()
		})
	}
	proc, exit := launch.InProcess(int(l.pid.Add(1)), &splitWriter{w: inW, l: l}, outR, errR, signal)
	out := &splitWriter{w: outW, l: l}
	agentLog := slog.New(slog.NewTextHandler(errW, nil))
	go func() {
		_ = referenceagent.Serve(ctx, referenceagent.DefaultOptions(), inR, out, agentLog, func(int) {})
		cancel()
		_ = outW.Close()
		_ = errW.Close()
		exit(launch.ExitStatus{})
	}()
	return proc, nil
}

// chunk is the size of the next piece of output.
func (l *memLauncher) chunk() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 1 + l.rng.IntN(64)
}

// splitWriter writes each buffer as pieces of random size: an io.Pipe
// hands every piece to a separate Read.
type splitWriter struct {
	w *io.PipeWriter
	l *memLauncher
}

func (s *splitWriter) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := s.w.Write(b[n:min(len(b), n+s.l.chunk())])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (s *splitWriter) Close() error { return s.w.Close() }

// spin starts n goroutines that burn CPU until the returned func stops
// them.
func spin(n int) func() {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0
			for !stop.Load() {
				x++
			}
			runtime.KeepAlive(x)
		})
	}
	return func() {
		stop.Store(true)
		wg.Wait()
	}
}

// cpuHogArg makes the test binary a CPU hog process (see TestMain).
const cpuHogArg = "cpu-hog"

// cpuHog spins until its parent is gone, then exits: a test binary that
// dies without reaping its hogs leaves none spinning.
func cpuHog() {
	parent := os.Getppid()
	for i := 0; ; i++ {
		if i%(1<<22) == 0 && os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

func withLauncher(l launch.Launcher) Option { return func(o *options) { o.launcher = l } }

// lockedBuffer is a bytes.Buffer safe for the adapter's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	b.b.Reset()
	b.mu.Unlock()
}
