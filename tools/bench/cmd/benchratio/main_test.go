package main

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestSample runs benchratio on a committed `go test -bench -count 5` output
// of tools/bench and compares its report with the golden file: medians over
// runs, sums, ratios, scaled values and verdicts all show there.
func TestSample(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "sample.txt"))
	require.NoError(t, err)
	var out bytes.Buffer
	ok, err := run(bytes.NewReader(in), &out)
	require.NoError(t, err)
	require.False(t, ok, "the sample misses targets on purpose")

	golden := filepath.Join("testdata", "sample.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}

func TestMedianOverRuns(t *testing.T) {
	res, err := parse(strings.NewReader(`goos: linux
BenchmarkX-2   	 100	 30 ns/op	 5 allocs/op
BenchmarkX-2   	 100	 10 ns/op	 1 allocs/op
BenchmarkX-2   	 100	 20 ns/op	 9 allocs/op
BenchmarkY/a/b-16   	 7	 1 ns/op
BenchmarkY/a/b-16   	 7	 4 ns/op
PASS
`))
	require.NoError(t, err)
	m, ok := res.median("BenchmarkX", "ns/op")
	require.True(t, ok)
	require.Equal(t, 20.0, m)
	m, _ = res.median("BenchmarkX", "allocs/op")
	require.Equal(t, 5.0, m)
	m, _ = res.median("BenchmarkY/a/b", "ns/op")
	require.Equal(t, 2.5, m, "an even count takes the mean of the middle two")
	_, ok = res.median("BenchmarkZ", "ns/op")
	require.False(t, ok)
}

func TestTrimProcs(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkX-2":       "BenchmarkX",
		"BenchmarkX/a-b-128": "BenchmarkX/a-b",
		"BenchmarkX/a-b":     "BenchmarkX/a-b",
		"BenchmarkX-":        "BenchmarkX-",
		"BenchmarkX":         "BenchmarkX",
	} {
		require.Equal(t, want, trimProcs(in), in)
	}
}

// TestCPURatio checks the CPU-time column: shown only when every term of a
// time ratio reported cpu-ns/op, never for values or other units.
func TestCPURatio(t *testing.T) {
	res := results{
		"BenchmarkA": {ns: {30}, cpuUnit: {12}},
		"BenchmarkB": {ns: {20}, cpuUnit: {4}},
		"BenchmarkC": {ns: {10}},
	}
	ab := target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkB", ns}}, cmp: atMost, goal: 2}
	o := evaluate(res, ab)
	require.Equal(t, "PASS", o.verdict(), "the verdict is on wall time")
	require.True(t, o.hasCPU)
	require.Equal(t, 3.0, o.cpu)

	ac := target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkB", ns}, {"BenchmarkC", ns}}, cmp: atMost, goal: 2}
	require.False(t, evaluate(res, ac).hasCPU, "BenchmarkC has no CPU time")
	value := target{num: []term{{"BenchmarkA", ns}}, scale: 1, unit: "ns", cmp: below, goal: 100}
	require.False(t, evaluate(res, value).hasCPU)
}

func TestNonResultLinesAreSkipped(t *testing.T) {
	res, err := parse(strings.NewReader(`BenchmarkFlood-2   	some output the benchmark printed
Benchmarks below are noisy
--- BENCH: BenchmarkX-2
    x_test.go:1: note
BenchmarkX-2   	 1	 5 ns/op
`))
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, []float64{5}, res["BenchmarkX"]["ns/op"])
}

func TestMalformedResultIsParseError(t *testing.T) {
	for _, in := range []string{
		"BenchmarkX-2 10\n",
		"BenchmarkX-2 10 5\n",
		"BenchmarkX-2 10 5 ns/op 7\n",
		"ok\nBenchmarkX-2 10 fast ns/op\n",
		"BenchmarkX-2 10 NaN ns/op\n",
		"BenchmarkX-2 10 +Inf ns/op\n",
	} {
		_, err := parse(strings.NewReader(in))
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%q: %v", in, err)
		require.Equal(t, strings.Count(in, "\n"), pe.Line, in)
		ok, err := run(strings.NewReader(in), &bytes.Buffer{})
		require.False(t, ok)
		require.ErrorAs(t, err, &pe)
	}
}

func TestOverlongLineIsParseError(t *testing.T) {
	in := "BenchmarkX-2 1 1 ns/op\n" + strings.Repeat("x", maxLineBytes+1) + "\n"
	_, err := parse(strings.NewReader(in))
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 2, pe.Line)
}

// TestVerdicts checks each comparison direction at and around its goal,
// and that a zero denominator or a missing benchmark is NO DATA, not a pass.
func TestVerdicts(t *testing.T) {
	ratio := func(c cmp, goal float64) target {
		return target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkB", ns}}, cmp: c, goal: goal}
	}
	res := results{
		"BenchmarkA": {ns: {30}},
		"BenchmarkB": {ns: {20}},
		"BenchmarkZ": {ns: {0}},
	}
	for _, tc := range []struct {
		t    target
		want string
	}{
		{ratio(atMost, 1.5), "PASS"},
		{ratio(atMost, 1.49), "MISS"},
		{ratio(atLeast, 1.5), "PASS"},
		{ratio(atLeast, 1.51), "MISS"},
		{ratio(below, 1.5), "MISS"},
		{ratio(below, 1.51), "PASS"},
		{target{num: []term{{"BenchmarkA", ns}}, scale: 1e-6, unit: "ms", cmp: below, goal: 100}, "PASS"},
		{target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkZ", ns}}, cmp: atLeast, goal: 1}, "NO DATA"},
		{target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkQ", ns}}, cmp: atLeast, goal: 1}, "NO DATA"},
		{target{num: []term{{"BenchmarkA", "B/op"}}, scale: 1, cmp: atMost, goal: 1}, "NO DATA"},
	} {
		require.Equal(t, tc.want, evaluate(res, tc.t).verdict(), "%+v", tc.t)
	}
	zero := evaluate(res, target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkZ", ns}}, cmp: atLeast, goal: 1})
	require.Contains(t, zero.detail, "zero denominator")
	missing := evaluate(res, target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkQ", ns}}, cmp: atLeast, goal: 1})
	require.Equal(t, "missing: BenchmarkQ ns/op", missing.detail)
}

// FuzzParse feeds arbitrary text to the parser: it must return results or a
// typed error, never panic, and every value it keeps must be finite.
func FuzzParse(f *testing.F) {
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte("BenchmarkX-2 10 5 ns/op 3 allocs/op\n"))
	f.Add([]byte("BenchmarkX-2 10 5\n"))
	f.Add([]byte("Benchmark 1 1e309 x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := parse(bytes.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		for name, units := range res {
			for unit, vs := range units {
				if len(vs) == 0 {
					t.Fatalf("%s %s kept without values", name, unit)
				}
				for _, v := range vs {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s %s kept %v", name, unit, v)
					}
				}
			}
		}
		if _, err := run(bytes.NewReader(in), &bytes.Buffer{}); err != nil {
			t.Fatalf("run after a clean parse: %v", err)
		}
	})
}

// TestWorstRunAndInfo checks a target judged on its worst run takes the
// largest value, not the median, and that an information-only comparison
// prints INFO and never fails the run.
func TestWorstRunAndInfo(t *testing.T) {
	res := results{
		"BenchmarkF": {"peak-MiB": {10, 70, 12}},
		"BenchmarkA": {ns: {30}},
		"BenchmarkB": {ns: {20}},
	}
	peak := target{num: []term{{"BenchmarkF", "peak-MiB"}}, scale: 1, unit: "MiB", cmp: below, goal: 64}
	require.Equal(t, "PASS", evaluate(res, peak).verdict(), "the median passes")
	peak.worst = true
	o := evaluate(res, peak)
	require.Equal(t, "MISS", o.verdict(), "the worst run misses")
	require.Equal(t, 70.0, o.value)

	info := target{num: []term{{"BenchmarkA", ns}}, den: []term{{"BenchmarkB", ns}}, info: true}
	require.Equal(t, "INFO", evaluate(res, info).verdict())
	require.Equal(t, "-", goal(info))
}

// TestPairedRatio checks a ratio a benchmark measured itself, its subject
// and floor alternating: the verdict is on the median of the runs' own
// ratios (not a ratio of medians), printed as a ratio with the times
// beside it, and a run without it is NO DATA.
func TestPairedRatio(t *testing.T) {
	res := results{
		"BenchmarkS": {
			ns:            {10, 40, 12},
			"floor-ns/op": {9, 20, 10},
			"s/floor":     {1.11, 2, 1.15},
		},
	}
	paired := target{
		num: []term{{"BenchmarkS", "s/floor"}}, paired: true,
		show: []term{{"BenchmarkS", ns}, {"BenchmarkS", "floor-ns/op"}},
		cmp:  atMost, goal: 1.2,
	}
	o := evaluate(res, paired)
	require.Equal(t, "PASS", o.verdict())
	require.Equal(t, 1.15, o.value, "the median of the runs' ratios, not the medians' ratio 12/10")
	require.Equal(t, "1.15x", format(paired, o.value))
	require.Equal(t, "<= 1.2x", goal(paired))
	require.Equal(t, "S 1.15 s/floor (max 2), S 12ns, S floor 10ns", o.detail)
	require.False(t, o.hasCPU)

	res["BenchmarkS"]["s/floor"] = []float64{1.3, 1.25, 1.1}
	require.Equal(t, "MISS", evaluate(res, paired).verdict(), "median 1.25, although the medians' ratio 12/10 would pass")

	delete(res["BenchmarkS"], "s/floor")
	require.Equal(t, "NO DATA", evaluate(res, paired).verdict())
}
