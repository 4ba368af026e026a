package launch

import "io"

// InProcess is a Process for a runtime that runs inside this process over
// the given streams instead of as a child: an in-memory agent, which lets
// tests run whole starts and teardowns inside a testing/synctest bubble
// (where no real process may run) at thousands per second. signal stands
// for the group's signals: Terminate calls it with kill false, Kill with
// kill true, each time. The runtime calls exit once, when it has ended;
// that is the reap (Exited closes, Status reports st).
func InProcess(pid int, stdin io.WriteCloser, stdout, stderr io.ReadCloser, signal func(kill bool)) (p *Process, exit func(st ExitStatus)) {
	p = &Process{
		pid:    pid,
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		group:  signalGroup(signal),
		exited: make(chan struct{}),
	}
	return p, func(st ExitStatus) {
		p.status = st
		close(p.exited)
	}
}

// signalGroup is the group of an in-process runtime: its signals are calls.
type signalGroup func(kill bool)

func (g signalGroup) terminate() error { g(false); return nil }
func (g signalGroup) kill() error      { g(true); return nil }
