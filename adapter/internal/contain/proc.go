package contain

import "bytes"

// Proc is one process as a read of the process table saw it.
type Proc struct {
	PID  int
	PPID int
	// Start is when the process started, in the platform's unit (clock
	// ticks since boot on Linux, microseconds since the epoch on macOS).
	// With PID it names one process for ever: a pid reused later comes
	// with a later start.
	Start uint64
}

// Key names one process for ever: its pid and its start.
type Key struct {
	PID   int
	Start uint64
}

// Key is p's identity.
func (p Proc) Key() Key { return Key{PID: p.PID, Start: p.Start} }

// tokenIn returns the value of EnvToken in env, a process's environment as
// NUL-separated NAME=value strings (on macOS preceded by its arguments),
// or "" when it is absent.
func tokenIn(env []byte) string {
	name := []byte(EnvToken + "=")
	for len(env) > 0 {
		entry, rest, _ := bytes.Cut(env, []byte{0})
		if v, ok := bytes.CutPrefix(entry, name); ok {
			return string(v)
		}
		env = rest
	}
	return ""
}
