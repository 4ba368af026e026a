//go:build !linux && !darwin

package acpsdk

import (
	"errors"
	"io"
	"syscall"
)

// newMarkPipe returns nil here: a mark follows the lines read so far.
// Windows has no descriptor to ask without waiting: PeekNamedPipe on an
// anonymous pipe (os.Pipe, exec's pipes) is synchronous I/O, serialised
// behind the reader's pending ReadFile on the same handle, so asking would
// make Mark wait for the peer's next write.
func newMarkPipe(io.Reader) *markPipe { return nil }

// markPipe is never made here.
type markPipe struct {
	rc   syscall.RawConn
	name string
}

func (*markPipe) buffered() int64 { return 0 }

func tryRead(uintptr, []byte) (int, bool, error) { return 0, false, errors.ErrUnsupported }
