package check

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrBaseline is the kind of every baseline parse error.
var ErrBaseline = errors.New("check: bad baseline")

// Baseline is a set of checks known to fail for one named peer, with a note
// each. Its file form is one entry per line, "CHECK-ID  free-text note";
// blank lines and lines starting with # are ignored. An ID written with a
// question mark, "CHECK-ID?", is a failure the peer shows in some runs and
// not in others (a race inside it): failing, it is known; passing, it is
// not taken for fixed. The map holds such an entry under that key, mark
// included.
type Baseline map[string]string

// intermittentMark ends the ID of an intermittent entry.
const intermittentMark = "?"

// ParseBaseline reads a baseline, refusing IDs that r does not know, so a
// typo cannot silently hide a failure.
func ParseBaseline[S any](rd io.Reader, r *Registry[S]) (Baseline, error) {
	b := Baseline{}
	sc := bufio.NewScanner(rd)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, note, _ := strings.Cut(line, " ")
		id := strings.TrimSuffix(key, intermittentMark)
		if !r.Has(id) {
			return nil, fmt.Errorf("%w: line %d: unknown check %q", ErrBaseline, n, id)
		}
		_, dup := b[id]
		_, dupSometimes := b[id+intermittentMark]
		if dup || dupSometimes {
			return nil, fmt.Errorf("%w: line %d: %q listed twice", ErrBaseline, n, id)
		}
		b[key] = strings.TrimSpace(note)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBaseline, err)
	}
	return b, nil
}

// Apply marks results against b: a listed check that failed again is a
// known failure; a listed check that passed is fixed, and the baseline is
// stale (Failed reports it). A check listed as intermittent is marked so,
// and is a known failure when it failed; its pass is no news.
func (b Baseline) Apply(rs []Result) {
	for i := range rs {
		if _, sometimes := b[rs[i].ID+intermittentMark]; sometimes {
			rs[i].Intermittent = true
			rs[i].Known = rs[i].Status == StatusFail
			continue
		}
		if _, listed := b[rs[i].ID]; !listed {
			continue
		}
		switch rs[i].Status {
		case StatusFail:
			rs[i].Known = true
		case StatusPass:
			rs[i].Fixed = true
		}
	}
}
