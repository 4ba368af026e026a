package hostile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/adapter/internal/launch"
)

// Launcher runs the runtime inside the test process: each launch is Run on
// its own goroutine over three pipes, for the plan its arguments name
// (the same command line the child process gets: the fakeagent scenario
// name, then Args). A signal ends it at once, as SIGTERM and SIGKILL end
// the child: its pipes close and it is reaped with the signal's status. In
// a testing/synctest bubble its delays take no time.
type Launcher struct {
	// Secret is the credential the runtime's stderr lines repeat.
	Secret string
	// Plan, when set, replaces Generate: a test of one defect writes its
	// plan by hand.
	Plan func(seed uint64, size Size) Plan

	pid  atomic.Int64
	mu   sync.Mutex
	recs map[string]*MemRecord
}

// Launch starts one runtime.
func (l *Launcher) Launch(_ context.Context, spec launch.Spec) (*launch.Process, error) {
	args := spec.Args
	if len(args) == 0 || !strings.HasSuffix(args[0], ":hostile") {
		return nil, errors.New("hostile: the command must name the hostile scenario")
	}
	seed, size, _, err := Parse(args[1:])
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	rec := &MemRecord{}
	stop := make(chan struct{})
	var (
		once sync.Once
		proc *launch.Process
		exit func(launch.ExitStatus)
	)
	// die is the process's end, once: its pipes close and it is reaped.
	die := func(st launch.ExitStatus) {
		once.Do(func() {
			close(stop)
			_ = inR.Close()
			_ = outW.Close()
			_ = errW.Close()
			exit(st)
		})
	}
	signal := func(kill bool) {
		st := launch.ExitStatus{Code: -1, Signal: "terminated"}
		if kill {
			st.Signal = "killed"
		}
		die(st)
	}
	proc, exit = launch.InProcess(int(l.pid.Add(1)), inW, outR, errR, signal)
	l.mu.Lock()
	if l.recs == nil {
		l.recs = map[string]*MemRecord{}
	}
	l.recs[proc.PID()] = rec
	l.mu.Unlock()
	a := fakeagent.New(inR, outW)
	code := -1
	a.Exit = func(c int) {
		code = c
		runtime.Goexit()
	}
	plan := Generate
	if l.Plan != nil {
		plan = l.Plan
	}
	go func() {
		defer func() { die(launch.ExitStatus{Code: code}) }()
		code = run(a, plan(seed, size), errW, l.Secret, rec, stop)
	}()
	return proc, nil
}

// Record returns what the runtime of pid recorded, once it has ended.
func (l *Launcher) Record(pid string) Record {
	l.mu.Lock()
	rec := l.recs[pid]
	l.mu.Unlock()
	if rec == nil {
		return Record{}
	}
	return rec.Record()
}

// MemRecord is a Recorder in memory.
type MemRecord struct {
	mu sync.Mutex
	r  Record
}

// Wrote records seqs.
func (m *MemRecord) Wrote(seqs ...int) {
	m.mu.Lock()
	m.r.Wrote = append(m.r.Wrote, seqs...)
	m.mu.Unlock()
}

// Trace records one trace line.
func (m *MemRecord) Trace(format string, args ...any) {
	line := format
	if len(args) > 0 {
		line = fmt.Sprintf(format, args...)
	}
	m.mu.Lock()
	m.r.Trace = append(m.r.Trace, line)
	m.mu.Unlock()
}

// Record returns a copy of what was recorded.
func (m *MemRecord) Record() Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Record{Wrote: append([]int(nil), m.r.Wrote...), Trace: append([]string(nil), m.r.Trace...)}
}
