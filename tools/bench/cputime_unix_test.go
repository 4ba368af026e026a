//go:build unix

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
