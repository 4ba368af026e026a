//go:build windows

package gentest

import (
	"syscall"
	"testing"
)

// cpuNow is this process's CPU time, user plus kernel (see the Unix file).
func cpuNow(b *testing.B) int64 {
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(syscall.Handle(^uintptr(0)), &creation, &exit, &kernel, &user); err != nil {
		b.Fatal(err)
	}
	return filetimeNanos(kernel) + filetimeNanos(user)
}

// filetimeNanos converts a FILETIME duration (100 ns units) to nanoseconds.
func filetimeNanos(f syscall.Filetime) int64 {
	return (int64(f.HighDateTime)<<32 | int64(f.LowDateTime)) * 100
}
