//go:build unix

package check

import "golang.org/x/sys/unix"

// interrupt sends SIGINT to the client process alone: a scenario agent in
// its process group must not take the interrupt for its own.
func interrupt(pid int) error { return unix.Kill(pid, unix.SIGINT) }

// interruptName names the interrupt in transcripts.
const interruptName = "SIGINT"
