// Package measure is the seam for measurement sources (spec §7): code that
// reads one specific runtime's token usage outside the wire, because the
// protocol carries no spend counter (MS-1).
//
// It holds the Source interface, Figure and the ordered Registry, and what
// every source shares: the claim rule (NamesRuntime), the runtime's own
// environment as the command line shows it (Launch.Getenv), the grading of
// run-cumulative counts against each turn's bound (Account) and a bounded
// reader of files a runtime appends lines to (Lines). The sources that ship
// are subpackages: gemini (Gemini CLI, §9), claude (claude-agent-acp) and
// codex (codex-acp), MS-16. The adapter's restart-to-settle (§8) drives
// Claim, Recognize, Env and Close through this interface and its turns call
// Drain; the registry's order is the claim order both rely on (MS-2, MS-3,
// RS-2).
package measure

import (
	"context"
	"errors"
	"fmt"
)

// Launch is what a source is offered.
type Launch struct {
	// Program and Args are the local command line, program first.
	Program string
	Args    []string
	// Remote is true for a launch over SSH; no source claims one (MS-2,
	// RS-7).
	Remote bool
	// Dir is the runtime's working directory, the workspace.
	Dir string
	// RuntimeName is empty on a first offer (MS-2); on a relaunch offer it
	// is the name the handshake reported (RS-4), and the command line is
	// the same one.
	RuntimeName string
}

// Source reads one runtime's usage. An instance serves one session start
// and is not used concurrently.
type Source interface {
	// Name identifies the source in logs.
	Name() string
	// Claim is offered a launch. A source claims only a local launch whose
	// command line names its runtime, or, on a relaunch offer, whose
	// reported name it recognises. Claiming arms its environment and
	// creates its private directory; refusing creates nothing. The error
	// reports a claim that could not be armed.
	Claim(l Launch) (bool, error)
	// Recognize reports whether a handshake's agentInfo.name is the
	// runtime this source reads; the version plays no part (MS-3).
	Recognize(runtimeName string) bool
	// Env is the environment assignments the claim armed (KEY=value),
	// appended after the inherited environment at launch (SP-1).
	Env() []string
	// Open starts measuring the session the runtime created.
	Open(sessionID string) error
	// Drain answers with the run-cumulative figure after a turn, bounded
	// by ctx (MS-6, MS-7). lowerBound is the turn's presence signal
	// (MS-5), 0 for an abnormal end (MS-11). ok is false for "nothing".
	Drain(ctx context.Context, lowerBound int64) (f Figure, ok bool)
	// Close releases the source and removes its directory; idempotent,
	// and safe on a source that never claimed (RS-8, TD-11).
	Close() error
}

// Usage is a run-cumulative token count.
type Usage struct {
	Input     int64
	Output    int64
	Total     int64
	CacheRead int64
}

// Grade says how far a figure accounts for the turn (MS-12).
type Grade int

// The grades.
const (
	// GradeUnknown: there was no bound to compare against.
	GradeUnknown Grade = iota
	// GradePartial: the figure advanced less than the turn's bound.
	GradePartial
	// GradeAccounted: the figure covers the turn's bound.
	GradeAccounted
)

// String names the grade.
func (g Grade) String() string {
	switch g {
	case GradeUnknown:
		return "unknown"
	case GradePartial:
		return "partial"
	case GradeAccounted:
		return "accounted"
	}
	return fmt.Sprintf("Grade(%d)", int(g))
}

// Figure is a source's answer.
type Figure struct {
	// Usage is the session's usage since Open.
	Usage Usage
	// Model names the model the figures are attributed to (MS-14).
	Model string
	// Origin names where within the source the figure came from; it is
	// the `source` attribute of the `usage recovered for a turn` record.
	Origin string
	Grade  Grade
}

// Factory makes a fresh, unclaimed Source for one session start.
type Factory func() Source

// Registry is the ordered list of known sources. Its order is the order in
// which sources are offered a launch and asked to recognise a runtime. The
// zero value is an empty registry: every session is unmeasured.
type Registry struct {
	names     []string
	factories []Factory
}

// ErrDuplicate is returned when a name is registered twice.
var ErrDuplicate = errors.New("measurement source already registered")

// Register appends a source. Registration happens while the adapter is
// built, never during sessions.
func (r *Registry) Register(name string, f Factory) error {
	if name == "" || f == nil {
		return errors.New("measurement source needs a name and a factory")
	}
	for _, n := range r.names {
		if n == name {
			return fmt.Errorf("%w: %q", ErrDuplicate, name)
		}
	}
	r.names = append(r.names, name)
	r.factories = append(r.factories, f)
	return nil
}

// Names lists the registered names in order.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Len is the number of registered sources.
func (r *Registry) Len() int { return len(r.names) }

// Instantiate returns one fresh Source per registration, in order, for a
// session start.
func (r *Registry) Instantiate() []Source {
	out := make([]Source, len(r.factories))
	for i, f := range r.factories {
		out[i] = f()
	}
	return out
}
