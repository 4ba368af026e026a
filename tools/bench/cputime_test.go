package bench

import (
	"syscall"
	"testing"
)

// cpuClock reads the CPU time this process has used, user plus system.
// Benchmarks report it per op next to ns/op: on a loaded machine the wall
// clock also counts the time the process waited for a core, CPU time does
// not, so ratios of CPU times stay meaningful when wall times are noise.
// It counts every goroutine of the process (the connection's too, and the
// garbage collector's), but not child processes.
func cpuClock(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time used since start per op as "cpu-ns/op".
// Call it after the b.Loop loop, with start read just before it.
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuClock(b)-start)/float64(b.N), "cpu-ns/op")
}
