//go:build windows

package check

import "golang.org/x/sys/windows"

// interrupt sends CTRL_BREAK_EVENT to the client's process group (the
// client leads it: isolate). CTRL_C_EVENT cannot be sent to a group; Go
// and Node programs see either as an interrupt.
func interrupt(pid int) error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
}

// interruptName names the interrupt in transcripts.
const interruptName = "CTRL_BREAK_EVENT"
