//go:build windows

package bench

import (
	"syscall"
	"testing"
)

// cpuClock is the Unix file's, read with GetProcessTimes.
func cpuClock(tb testing.TB) int64 {
	var creation, exit, kernel, user syscall.Filetime
	// ^0 is the pseudo-handle of the current process.
	if err := syscall.GetProcessTimes(syscall.Handle(^uintptr(0)), &creation, &exit, &kernel, &user); err != nil {
		tb.Fatal(err)
	}
	return filetimeNanos(kernel) + filetimeNanos(user)
}

// filetimeNanos converts a FILETIME duration (100 ns units) to nanoseconds.
func filetimeNanos(f syscall.Filetime) int64 {
	return (int64(f.HighDateTime)<<32 | int64(f.LowDateTime)) * 100
}
