package launch

import (
	"context"
	"io"
	"sync"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// MsgDial is the message of a failed connection to a served runtime
// ([acpkit]: the spec knows only processes).
const MsgDial = "failed to connect to the served runtime"

// Dialed is the launcher of a runtime served over the network ([acpkit],
// the adapter's WithDialer): each launch is a connection from Dial. The
// Process it returns has no pid (PID is ""), its stdin and stdout are the
// connection and its stderr is empty; a signal, or closing its stdin,
// closes the connection, and the process "exits" (status 0) when the
// connection ends. ctx binds the connection's life as it binds a
// process's (SP-3).
type Dialed struct {
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
}

// Launch connects.
func (d Dialed) Launch(ctx context.Context, _ Spec) (*Process, error) {
	conn, err := d.Dial(ctx)
	if err != nil {
		return nil, fault.New(contract.KindPortExit, MsgDial, err)
	}
	errR, errW := io.Pipe()
	var (
		once sync.Once
		exit func(ExitStatus)
	)
	end := func() {
		once.Do(func() {
			_ = conn.Close()
			_ = errW.Close()
			exit(ExitStatus{})
		})
	}
	var proc *Process
	proc, exit = InProcess(0, &dialedIn{w: conn, end: end}, &dialedOut{r: conn, end: end}, errR, func(bool) { end() })
	stop := context.AfterFunc(ctx, end)
	go func() {
		<-proc.Exited()
		stop()
	}()
	return proc, nil
}

// dialedIn is the connection as stdin: closing it ends the connection.
type dialedIn struct {
	w   io.Writer
	end func()
}

func (d *dialedIn) Write(b []byte) (int, error) { return d.w.Write(b) }

func (d *dialedIn) Close() error { d.end(); return nil }

// dialedOut is the connection as stdout: its end, or a failed read, is
// the runtime's exit.
type dialedOut struct {
	r   io.Reader
	end func()
}

func (d *dialedOut) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	if err != nil {
		d.end()
	}
	return n, err
}

func (d *dialedOut) Close() error { d.end(); return nil }

// ResolveDialed is Resolve for a runtime served over the network: only the
// workspace is checked (LT-1, LT-2), since nothing is run; command is kept
// for the records.
func ResolveDialed(workspace, command string) (Target, error) {
	dir, err := CheckWorkspace(workspace)
	if err != nil {
		return Target{}, err
	}
	return Target{Workspace: dir, Command: command, Dialed: true}, nil
}
