//go:build unix

package gentest

import (
	"syscall"
	"testing"
)

// cpuNow is this process's CPU time: on a shared machine wall time counts
// waiting for a core, CPU time does not.
func cpuNow(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
