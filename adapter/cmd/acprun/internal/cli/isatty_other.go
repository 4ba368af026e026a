//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package cli

// IsTerminal reports false: this platform has no terminal check, and plain
// output is always correct.
func IsTerminal(fd uintptr) bool { return false }
