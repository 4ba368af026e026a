//go:build linux || darwin

package acpsdk

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// newMarkPipe returns the descriptor of r when r is a pipe (or another
// *os.File) the runtime's poller reads without blocking, nil otherwise:
// only such a descriptor can be read by one attempt that never waits,
// which is what lets the reader count every byte it takes under markMu.
func newMarkPipe(r io.Reader) *markPipe {
	f, ok := r.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblocking := false
	if rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblocking = err == nil && fl&unix.O_NONBLOCK != 0
	}) != nil || !nonblocking {
		return nil
	}
	return &markPipe{rc: rc, name: f.Name()}
}

// markPipe is the raw descriptor of an ordered connection's stream.
type markPipe struct {
	rc   syscall.RawConn
	name string
}

// buffered is FIONREAD: the bytes the peer wrote that no read has taken
// yet, 0 when the descriptor cannot tell. It never waits.
func (p *markPipe) buffered() int64 {
	var n int
	if p.rc.Control(func(fd uintptr) {
		v, err := unix.IoctlGetInt(int(fd), fionread)
		if err == nil {
			n = v
		}
	}) != nil {
		return 0
	}
	return int64(max(n, 0))
}

// tryRead reads what fd holds into b without waiting; wait is true when it
// holds nothing yet.
func tryRead(fd uintptr, b []byte) (n int, wait bool, err error) {
	for {
		n, err := unix.Read(int(fd), b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, true, nil
		case err != nil:
			return 0, false, err
		case n == 0 && len(b) > 0:
			return 0, false, io.EOF
		}
		return n, false, nil
	}
}
