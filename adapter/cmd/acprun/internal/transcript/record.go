package transcript

import (
	"io"
	"sync"
	"time"

	"acpkit.dev/adapter"
	tfile "acpkit.dev/internal/transcript"
)

// Recorder writes a transcript. Its methods are safe for concurrent use:
// Tap is called from the adapter's goroutines.
type Recorder struct {
	mu      sync.Mutex
	w       *tfile.Writer
	start   time.Time
	started bool
}

// NewRecorder writes a transcript to w; Start writes its header.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: tfile.NewWriter(w)} }

// Start writes the header; entries are timed from now. Entries tapped
// before Start are dropped.
func (r *Recorder) Start(h Header, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start, r.started = now, true
	_ = r.w.WriteHeader(h, now) // the error is kept for Err
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
		en.SetLine(e.Line)
	case adapter.WireSpawn:
		en.PID, en.Argv = e.AgentPID, e.Argv
	case adapter.WireExit:
		code := e.ExitCode
		en.Status, en.Code = e.ExitStatus, &code
	default:
		return
	}
	_ = r.w.WriteEntry(en) // the error is kept for Err
}

// Err is the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.Err()
}
