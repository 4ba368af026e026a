package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParseError is a benchmark result line that cannot be read.
type ParseError struct {
	Line   int    // 1-based line number in the input
	Text   string // the offending line
	Reason string
}

// Error says where the input is malformed and how.
func (e *ParseError) Error() string {
	return fmt.Sprintf("benchratio: line %d: %s: %q", e.Line, e.Reason, e.Text)
}

// maxLineBytes bounds one line of input; go test never prints longer
// result lines, and a bound keeps a runaway input from taking the heap.
const maxLineBytes = 1 << 20

// results holds every value read, by benchmark name (without the
// GOMAXPROCS suffix) and unit, in input order.
type results map[string]map[string][]float64

// parse reads `go test -bench` output. Lines that are not benchmark results
// (headers, PASS/ok lines, logs) are skipped; a line that starts like a
// result (a Benchmark name, then an iteration count) but does not go on as
// value-unit pairs is a *ParseError.
func parse(r io.Reader) (results, error) {
	res := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
			// A name line split by output the benchmark printed, or
			// prose that happens to start with "Benchmark".
			continue
		}
		pairs := f[2:]
		if len(pairs) == 0 || len(pairs)%2 != 0 {
			return nil, &ParseError{Line: n, Text: line, Reason: "want value-unit pairs after the iteration count"}
		}
		name := trimProcs(f[0])
		for i := 0; i < len(pairs); i += 2 {
			v, err := strconv.ParseFloat(pairs[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &ParseError{Line: n, Text: line, Reason: fmt.Sprintf("value %q is not a finite number", pairs[i])}
			}
			if res[name] == nil {
				res[name] = map[string][]float64{}
			}
			res[name][pairs[i+1]] = append(res[name][pairs[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		return nil, fmt.Errorf("benchratio: reading input: %w", err)
	}
	return res, nil
}

// trimProcs drops the "-N" GOMAXPROCS suffix go test appends to names.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}

// median returns the median of the values of bench in unit, and whether
// there were any.
func (r results) median(bench, unit string) (float64, bool) {
	vs := r[bench][unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m], true
	}
	return (s[m-1] + s[m]) / 2, true
}

// value is the median of bench's values in unit, or with worst their
// largest, and whether there were any.
func (r results) value(bench, unit string, worst bool) (float64, bool) {
	if !worst {
		return r.median(bench, unit)
	}
	vs := r[bench][unit]
	if len(vs) == 0 {
		return 0, false
	}
	return slices.Max(vs), true
}
