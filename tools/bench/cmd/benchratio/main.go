// Command benchratio reads `go test -bench` output on stdin and prints each
// of acpkit's benchmark comparisons (tools/bench) as a ratio or a value
// against its target, with PASS or MISS (INFO for a comparison printed
// without a goal). Each figure is the median over every run of a benchmark
// in the input (go test -count), or for a target judged on its worst run
// (a peak), the largest value. Verdicts are on
// the wall clock (ns/op); where the benchmarks also reported their CPU time
// (cpu-ns/op), the same ratio over CPU times is printed beside it, which
// stays meaningful on a loaded machine where wall times are noise.
//
// Usage:
//
//	go test -run '^$' -bench . -benchmem -count 5 acpkit.dev/tools/bench/... > bench.out
//	go run ./tools/bench/cmd/benchratio < bench.out
//
// It exits 1 when a target is missed or has no measurement, 2 when the
// input cannot be read.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

func main() {
	ok, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// outcome is one target evaluated against the input.
type outcome struct {
	t       target
	value   float64
	missing []term // terms with no measurement; value is meaningless then
	detail  string // the medians behind value
	// cpu is the same ratio of CPU times (the benchmarks' cpu-ns/op), when
	// every term reported one; the verdict stays on the wall clock.
	cpu    float64
	hasCPU bool
}

func (o outcome) verdict() string {
	switch {
	case len(o.missing) > 0:
		return "NO DATA"
	case o.t.info:
		return "INFO"
	case o.t.cmp.holds(o.value, o.t.goal):
		return "PASS"
	default:
		return "MISS"
	}
}

// run reports every target on w and says whether all passed.
func run(r io.Reader, w io.Writer) (bool, error) {
	res, err := parse(r)
	if err != nil {
		return false, err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "issue spec\tcomparison\tmeasured\ttarget\tresult\tcpu-time ratio\tfrom medians")
	all := true
	for _, t := range targets {
		o := evaluate(res, t)
		v := o.verdict()
		if v != "PASS" && v != "INFO" {
			all = false
		}
		measured := "-"
		if len(o.missing) == 0 {
			measured = format(t, o.value)
		}
		cpu := "-"
		if o.hasCPU {
			cpu = format(t, o.cpu)
		}
		fmt.Fprintf(tw, "#%d%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.issue, spec(t), t.what, measured, goal(t), v, cpu, o.detail)
	}
	if err := tw.Flush(); err != nil {
		return false, fmt.Errorf("benchratio: writing report: %w", err)
	}
	return all, nil
}

func evaluate(res results, t target) outcome {
	o := outcome{t: t}
	sum := func(terms []term) float64 {
		var s float64
		for _, tm := range terms {
			m, ok := res.value(tm.bench, tm.unit, t.worst)
			if !ok {
				o.missing = append(o.missing, tm)
				continue
			}
			s += m
		}
		return s
	}
	num := sum(t.num)
	switch {
	case t.paired:
		o.value = num
		o.detail = describe(res, t.num)
		for _, tm := range t.show {
			o.detail += ", " + describe(res, []term{tm})
		}
		if len(t.cpu) == 2 {
			c0, ok0 := res.median(t.cpu[0].bench, t.cpu[0].unit)
			c1, ok1 := res.median(t.cpu[1].bench, t.cpu[1].unit)
			if ok0 && ok1 && c1 != 0 {
				o.cpu, o.hasCPU = c0/c1, true
			}
		}
	case t.den == nil:
		o.value = num * t.scale
		o.detail = describe(res, t.num)
	default:
		den := sum(t.den)
		o.detail = describe(res, t.num) + " / " + describe(res, t.den)
		if den == 0 && len(o.missing) == 0 {
			// A ratio over nothing measured is no measurement either.
			o.missing = append(o.missing, t.den...)
			o.detail = "zero denominator: " + o.detail
			return o
		}
		if len(o.missing) == 0 {
			o.value = num / den
			o.cpu, o.hasCPU = cpuRatio(res, t)
		}
	}
	if len(o.missing) > 0 {
		var names []string
		for _, m := range o.missing {
			names = append(names, m.bench+" "+m.unit)
		}
		o.detail = "missing: " + strings.Join(names, ", ")
	}
	return o
}

// cpuUnit is the CPU time per op the tools/bench benchmarks report.
const cpuUnit = "cpu-ns/op"

// cpuRatio is t's ratio over CPU times instead of wall times, when t
// compares times and every benchmark in it reported its CPU time.
func cpuRatio(res results, t target) (float64, bool) {
	sum := func(terms []term) (float64, bool) {
		var s float64
		for _, tm := range terms {
			if tm.unit != ns {
				return 0, false
			}
			m, ok := res.median(tm.bench, cpuUnit)
			if !ok {
				return 0, false
			}
			s += m
		}
		return s, true
	}
	num, ok := sum(t.num)
	if !ok {
		return 0, false
	}
	den, ok := sum(t.den)
	if !ok || den == 0 {
		return 0, false
	}
	return num / den, true
}

// describe lists the medians of terms, e.g. "decode/coder 27.3µs + encode/coder 27.1µs".
func describe(res results, terms []term) string {
	parts := make([]string, 0, len(terms))
	for _, tm := range terms {
		m, _ := res.median(tm.bench, tm.unit)
		name := strings.TrimPrefix(tm.bench, "Benchmark")
		switch {
		case strings.HasSuffix(tm.unit, ns):
			// ns/op, or a named time per op such as spawn-ns/op.
			if tm.unit != ns {
				name += " " + strings.TrimSuffix(tm.unit, "-"+ns)
			}
			parts = append(parts, name+" "+duration(m))
		case len(res[tm.bench][tm.unit]) > 1:
			// A value, not a time: its worst run matters too (a peak heap).
			parts = append(parts, fmt.Sprintf("%s %.4g %s (max %.4g)", name, m, tm.unit, slices.Max(res[tm.bench][tm.unit])))
		default:
			parts = append(parts, fmt.Sprintf("%s %.4g %s", name, m, tm.unit))
		}
	}
	return strings.Join(parts, " + ")
}

// spec prints a target's requirement ID after its issue number.
func spec(t target) string {
	if t.spec == "" {
		return ""
	}
	return " " + t.spec
}

// goal prints a target's goal as briefly as it was written (">= 15x",
// "< 64 MiB"), or "-" for a comparison printed for information.
func goal(t target) string {
	switch {
	case t.info:
		return "-"
	case t.den != nil || t.paired:
		return fmt.Sprintf("%s %gx", t.cmp, t.goal)
	}
	return fmt.Sprintf("%s %g %s", t.cmp, t.goal, t.unit)
}

// format prints a measured value: ratios to two decimals, values to four digits.
func format(t target, v float64) string {
	if t.den != nil || t.paired {
		return fmt.Sprintf("%.2fx", v)
	}
	return fmt.Sprintf("%.4g %s", v, t.unit)
}

// duration prints nanoseconds in the largest unit that keeps them >= 1.
func duration(nsec float64) string {
	switch {
	case nsec >= 1e9:
		return fmt.Sprintf("%.3gs", nsec/1e9)
	case nsec >= 1e6:
		return fmt.Sprintf("%.3gms", nsec/1e6)
	case nsec >= 1e3:
		return fmt.Sprintf("%.3gµs", nsec/1e3)
	default:
		return fmt.Sprintf("%.3gns", nsec)
	}
}
