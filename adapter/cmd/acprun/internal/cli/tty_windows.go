package cli

import (
	"errors"
	"io"
	"os"
	"time"
)

// OpenControllingTerminal opens the console acprun runs at, whatever its
// standard streams are: CONIN$ to read the answer, CONOUT$ to ask; an
// error when there is none.
func OpenControllingTerminal() (io.ReadWriteCloser, error) {
	in, err := os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		in.Close()
		return nil, err
	}
	return console{in: in, out: out}, nil
}

// console reads CONIN$ and writes CONOUT$.
type console struct{ in, out *os.File }

func (c console) Read(p []byte) (int, error)        { return c.in.Read(p) }
func (c console) Write(p []byte) (int, error)       { return c.out.Write(p) }
func (c console) SetReadDeadline(t time.Time) error { return c.in.SetReadDeadline(t) }
func (c console) Close() error                      { return errors.Join(c.in.Close(), c.out.Close()) }
