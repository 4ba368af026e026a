package measure

import (
	"context"
	"strings"
	"time"
)

// Count is what the records a source counted since Open add up to.
type Count struct {
	// Usage is the run-cumulative figure, folded the source's way.
	Usage Usage
	// Basis is what a turn's lower bound is compared with (GEM-6): input
	// plus output, as far as the bound counts them.
	Basis int64
	// Records is how many records were counted; NonZero how many of them
	// had a counter that was not zero (GEM-10).
	Records, NonZero int
	// Model is the model of record, "" when no record named one.
	Model string
}

// measuredSince is GEM-10: a figure is measured when some record counted
// since before has a non-zero counter, or records arrived and there is no
// positive bound a zero block could fail to prove.
func (c Count) measuredSince(before Count, bound int64) bool {
	return c.Records > before.Records && (c.NonZero > before.NonZero || bound <= 0)
}

// Account grades a session's run-cumulative counts against each turn's
// lower bound and remembers what it last answered (GEM-7, GEM-10..GEM-12).
// A source keeps one per session; the zero value is a fresh session.
type Account struct {
	// answered is the basis of the last figure answered; carry the part
	// of earlier turns' bounds no figure covered.
	answered, carry int64
	last            Usage
	model           string
}

// Answered is the basis of the last figure answered.
func (a *Account) Answered() int64 { return a.answered }

// Carry is the part of earlier turns' bounds no figure covered.
func (a *Account) Carry() int64 { return a.carry }

// Last is the last figure's usage: what the next one never goes below.
func (a *Account) Last() Usage { return a.last }

// Need is how far a turn with this bound waits for the basis to advance:
// the bound plus what earlier turns left uncovered (GEM-7).
func (a *Account) Need(bound int64) int64 { return max(bound, 0) + a.carry }

// Covers reports whether c has advanced past the last answer by this
// turn's need, which ends a drain early (GEM-7).
func (a *Account) Covers(c Count, bound int64) bool {
	return bound > 0 && c.Basis-a.answered >= a.Need(bound)
}

// Answer grades c against the turn's bound, carries what it left
// uncovered, and returns the figure: never less than the last one, with
// the last non-empty model (GEM-11, GEM-12). origin names where the figure
// came from.
func (a *Account) Answer(bound int64, c Count, origin string) Figure {
	need := a.Need(bound)
	advance := max(c.Basis-a.answered, 0)
	grade := GradePartial
	switch {
	case bound <= 0:
		grade = GradeUnknown
	case advance >= need:
		grade = GradeAccounted
	}
	a.carry = max(need-advance, 0)
	if c.Basis >= a.answered {
		a.last, a.answered = c.Usage, c.Basis
	}
	if m := strings.TrimSpace(c.Model); m != "" {
		a.model = m
	}
	return Figure{Usage: a.last, Model: a.model, Origin: origin, Grade: grade}
}

// Nothing records a turn that got no figure: its whole need is carried.
func (a *Account) Nothing(bound int64) { a.carry = a.Need(bound) }

// Poll runs read at once and then every `every` until it reports done,
// `within` has passed, or ctx ends; it reports whether ctx ended it.
func Poll(ctx context.Context, every, within time.Duration, read func() (done bool)) (cancelled bool) {
	if read() {
		return false
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-deadline.C:
			return false
		case <-tick.C:
			if read() {
				return false
			}
		}
	}
}

// Drain is a whole drain for a source with one kind of record (GEM-7,
// GEM-10, GEM-11): before is the count since Open as the drain begins,
// before anything is read; read folds whatever arrived since into it and
// returns it. read is polled until the count covers the turn's need (or,
// without a bound, until anything arrives), `within` passes, or ctx ends,
// which is "nothing". The figure is then answered when measured.
func (a *Account) Drain(ctx context.Context, bound int64, every, within time.Duration, before Count, read func() Count, origin string) (Figure, bool) {
	c := before
	cancelled := Poll(ctx, every, within, func() bool {
		c = read()
		return a.Covers(c, bound) || (bound <= 0 && c.Records > before.Records)
	})
	switch {
	case cancelled:
	case a.Covers(c, bound), c.measuredSince(before, bound):
		return a.Answer(bound, c, origin), true
	}
	a.Nothing(bound)
	return Figure{}, false
}
