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
// blank lines and lines starting with # are ignored.
type Baseline map[string]string

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
		id, note, _ := strings.Cut(line, " ")
		if !r.Has(id) {
			return nil, fmt.Errorf("%w: line %d: unknown check %q", ErrBaseline, n, id)
		}
		if _, dup := b[id]; dup {
			return nil, fmt.Errorf("%w: line %d: %q listed twice", ErrBaseline, n, id)
		}
		b[id] = strings.TrimSpace(note)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBaseline, err)
	}
	return b, nil
}

// Apply marks results against b: a listed check that failed again is a
// known failure; a listed check that passed is fixed, and the baseline is
// stale (Failed reports it).
func (b Baseline) Apply(rs []Result) {
	for i := range rs {
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
