package adapter

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"acpkit.dev/adapter/internal/launch"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireLog collects tapped events, copying each line as the tap demands.
type wireLog struct {
	mu     sync.Mutex
	events []WireEvent
	closed bool // set once StopSession returned; a later event is a bug
	late   int
}

func (w *wireLog) tap(e WireEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.late++
	}
	e.Line = bytes.Clone(e.Line)
	w.events = append(w.events, e)
}

func TestWireTapSeesEveryLineStderrAndTheProcess(t *testing.T) {
	var w wireLog
	h := newHarness(t, WithWireTap(w.tap))
	s, err := h.a.StartSession(context.Background(), h.ref())
	require.NoError(t, err)
	_, err, _ = h.turn(s, "text")
	require.NoError(t, err)
	require.NoError(t, h.a.StopSession(context.Background(), s))
	w.mu.Lock()
	w.closed = true
	events := w.events
	w.mu.Unlock()

	require.NotEmpty(t, events)
	assert.Equal(t, WireSpawn, events[0].Kind)
	assert.Equal(t, refagent(t), events[0].Argv[0])
	assert.Equal(t, WireExit, events[len(events)-1].Kind, "the exit is reported before StopSession returns")
	var kinds = map[WireKind]int{}
	for i, e := range events {
		kinds[e.Kind]++
		assert.Equal(t, s.AgentPID, e.AgentPID)
		if i > 0 {
			assert.False(t, e.Time.Before(events[i-1].Time), "event %d goes back in time", i)
		}
		if e.Kind == WireSend || e.Kind == WireRecv {
			assert.True(t, bytes.HasPrefix(e.Line, []byte("{")), "a protocol line, whole and without its newline: %q", e.Line)
			assert.False(t, bytes.HasSuffix(e.Line, []byte("\n")))
		}
	}
	assert.Equal(t, 1, kinds[WireSpawn])
	assert.Equal(t, 1, kinds[WireExit])
	assert.GreaterOrEqual(t, kinds[WireSend], 3, "initialize, session/new, session/prompt")
	assert.GreaterOrEqual(t, kinds[WireRecv], 3)
	assert.Positive(t, kinds[WireStderr], "the reference agent logs to stderr")
	assert.Contains(t, string(events[1].Line), `"method":"initialize"`, "the first line sent is initialize")
	w.mu.Lock()
	assert.Zero(t, w.late, "no event after StopSession returned")
	w.mu.Unlock()
}

func TestWireTapSplitsStderrIntoLines(t *testing.T) {
	var got []string
	tp := &tapper{tap: func(e WireEvent) { got = append(got, string(e.Line)) }}
	r := tp.stderr(&chunkReader{chunks: []string{"one\ntw", "o\n", "three"}})
	buf := make([]byte, 16)
	for {
		if _, err := r.Read(buf); err != nil {
			break
		}
	}
	assert.Equal(t, []string{"one", "two", "three"}, got)
}

// chunkReader returns its chunks one Read at a time.
type chunkReader struct{ chunks []string }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks = c.chunks[1:]
	return n, nil
}

// The runtime's last stderr lines are often still in the pipe when it is
// reaped; the exit must come after them, not in the middle of them (seen
// once in CI as TestWireTapSeesEveryLineStderrAndTheProcess ending on a
// stderr line). In a bubble the exit's goroutine runs as far as it can
// before the stderr is read, which makes the old order certain.
func TestWireTapReportsTheExitAfterTheLastStderrLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kinds []WireKind
		var lines []string
		tp := &tapper{tap: func(e WireEvent) {
			kinds = append(kinds, e.Kind)
			if e.Kind == WireStderr {
				lines = append(lines, string(e.Line))
			}
		}, drain: time.Second}
		stderrR, stderrW := io.Pipe()
		proc, exit := launch.InProcess(7, nopWriteCloser{}, io.NopCloser(strings.NewReader("")), stderrR, func(bool) {})
		tp.spawned(proc, launch.Spec{Program: "agent"})
		r := tp.stderr(stderrR)
		go func() {
			_, _ = io.WriteString(stderrW, "last words\n")
			_ = stderrW.Close()
		}()
		exit(launch.ExitStatus{})
		synctest.Wait()
		_, err := io.Copy(io.Discard, r)
		require.NoError(t, err)
		tp.close(proc)
		assert.Equal(t, []WireKind{WireSpawn, WireStderr, WireExit}, kinds)
		assert.Equal(t, []string{"last words"}, lines)
	})
}

// A descendant can hold the runtime's stderr open long after the runtime
// was reaped; the exit is then reported the drain bound after the reap,
// not only at teardown.
func TestWireTapReportsTheExitWhenStderrStaysOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex // the race detector sees no order in the bubble's clock
			kinds []WireKind
			at    time.Time
		)
		seen := func() []WireKind { mu.Lock(); defer mu.Unlock(); return slices.Clone(kinds) }
		tp := &tapper{tap: func(e WireEvent) {
			mu.Lock()
			defer mu.Unlock()
			kinds = append(kinds, e.Kind)
			at = e.Time
		}, drain: time.Second}
		stderrR, stderrW := io.Pipe()
		proc, exit := launch.InProcess(7, nopWriteCloser{}, io.NopCloser(strings.NewReader("")), stderrR, func(bool) {})
		tp.spawned(proc, launch.Spec{Program: "agent"})
		r := tp.stderr(stderrR)
		go func() { _, _ = io.Copy(io.Discard, r) }()
		reaped := time.Now()
		exit(launch.ExitStatus{})
		synctest.Wait()
		assert.Equal(t, []WireKind{WireSpawn}, seen(), "not before the drain bound")
		time.Sleep(time.Second) // the bubble's clock: the drain bound passes
		synctest.Wait()
		assert.Equal(t, []WireKind{WireSpawn, WireExit}, seen())
		mu.Lock()
		assert.Equal(t, time.Second, at.Sub(reaped))
		mu.Unlock()
		tp.close(proc)
		_ = stderrW.Close()
	})
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
