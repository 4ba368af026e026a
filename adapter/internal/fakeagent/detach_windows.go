//go:build windows

package fakeagent

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// holderAttr gives a detached holder its own process group. It stays in
// the runtime's job, which allows no breakaway: on Windows the job kill
// reaches every descendant.
func holderAttr(detach bool) *syscall.SysProcAttr {
	if !detach {
		return nil
	}
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}
