//go:build windows

package launch

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

// pipeBuffer is the size of each direction's buffer in the kernel.
const pipeBuffer = 64 << 10

// pipeSeq numbers the pipes this process creates, so names never repeat.
var pipeSeq atomic.Uint64

// overlappedPipe makes one pipe for a child's stdio. The parent's end is
// opened for overlapped I/O: the runtime's poller then gives its *os.File
// read and write deadlines and a Close that releases a blocked Read, which
// the synchronous handles of os.Pipe lack (the stderr collector's finish,
// TD-9, and the adapter's own bounds rely on both). The child's end is an
// ordinary synchronous handle, as programs expect of their stdio.
//
// parentReads selects the direction: the parent reads (stdout, stderr) or
// writes (stdin). Neither handle is inheritable; os/exec duplicates the
// child's end into the child.
func overlappedPipe(parentReads bool) (parent, child *os.File, err error) {
	name := fmt.Sprintf(`\\.\pipe\acpkit-launch-%d-%d`, os.Getpid(), pipeSeq.Add(1))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	access, childAccess := uint32(windows.PIPE_ACCESS_OUTBOUND), uint32(windows.GENERIC_READ)
	if parentReads {
		access, childAccess = windows.PIPE_ACCESS_INBOUND, windows.GENERIC_WRITE
	}
	// FIRST_PIPE_INSTANCE fails rather than join a pipe someone else
	// created under the same name.
	server, err := windows.CreateNamedPipe(name16,
		access|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT,
		1, pipeBuffer, pipeBuffer, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create named pipe: %w", err)
	}
	client, err := windows.CreateFile(name16, childAccess, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		_ = windows.CloseHandle(server)
		return nil, nil, fmt.Errorf("open named pipe: %w", err)
	}
	if err := awaitConnected(server); err != nil {
		_ = windows.CloseHandle(client)
		_ = windows.CloseHandle(server)
		return nil, nil, fmt.Errorf("connect named pipe: %w", err)
	}
	return os.NewFile(uintptr(server), name), os.NewFile(uintptr(client), name), nil
}

// awaitConnected completes the server side of a pipe whose client has
// already opened it: ConnectNamedPipe then reports ERROR_PIPE_CONNECTED.
func awaitConnected(server windows.Handle) error {
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(ev)
	ov := windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(server, &ov)
	switch {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		return nil
	case errors.Is(err, windows.ERROR_IO_PENDING):
		var n uint32
		return windows.GetOverlappedResult(server, &ov, &n, true)
	default:
		return err
	}
}
