//go:build unix

package fakeagent

import "syscall"

// holderAttr puts a detached holder in its own session, out of the
// runtime's process group.
func holderAttr(detach bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: detach}
}
