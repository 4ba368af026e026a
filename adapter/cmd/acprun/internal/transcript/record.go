package transcript

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter"
)

// Recorder writes a transcript. Its methods are safe for concurrent use:
// Tap is called from the adapter's goroutines.
type Recorder struct {
	mu      sync.Mutex
	w       *bufio.Writer
	start   time.Time
	started bool
	err     error
}

// NewRecorder writes a transcript to w; Start writes its header.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: bufio.NewWriter(w)} }

// Start writes the header; entries are timed from now. Entries tapped
// before Start are dropped.
func (r *Recorder) Start(h Header, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h.Format, h.Version = Format, Version
	h.Started = now.UTC().Format(time.RFC3339Nano)
	r.start, r.started = now, true
	r.write(h)
}

// Tap records one adapter wire event (adapter.WithWireTap).
func (r *Recorder) Tap(e adapter.WireEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		return
	}
	en := Entry{TNS: e.Time.Sub(r.start).Nanoseconds(), Kind: string(e.Kind)}
	switch e.Kind {
	case adapter.WireSend, adapter.WireRecv, adapter.WireStderr:
		en.setLine(e.Line)
	case adapter.WireSpawn:
		en.PID, en.Argv = e.AgentPID, e.Argv
	case adapter.WireExit:
		code := e.ExitCode
		en.Status, en.Code = e.ExitStatus, &code
	default:
		return
	}
	r.write(en)
}

// write encodes v as one line and flushes it, so a transcript cut short
// by a crash keeps everything before the crash; r.mu is held.
func (r *Recorder) write(v any) {
	if r.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = r.w.Write(append(b, '\n'))
	}
	if err == nil {
		err = r.w.Flush()
	}
	if err != nil {
		r.err = fmt.Errorf("transcript: %w", err)
	}
}

// Err is the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
