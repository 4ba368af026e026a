package contain

import (
	"errors"

	"golang.org/x/sys/unix"
)

// szomb is the state of a process that has ended but not been reaped
// (SZOMB in <sys/proc.h>).
const szomb = 5

// listProcs reads every process from the kernel (sysctl kern.proc.all).
func listProcs() ([]Proc, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(kps))
	for i := range kps {
		if p := procOf(&kps[i]); p.PID > 0 {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// darwinTable reads the whole table each time: one sysctl returns every
// process with its parent and start.
type darwinTable struct{}

func newPlatformSource() source { return darwinTable{} }

func (darwinTable) list() ([]Proc, error)       { return listProcs() }
func (darwinTable) token(p Proc) (string, bool) { return readToken(p) }

// procOf converts the kernel's record; Start is in microseconds.
func procOf(kp *unix.KinfoProc) Proc {
	st := kp.Proc.P_starttime
	return Proc{
		PID:   int(kp.Proc.P_pid),
		PPID:  int(kp.Eproc.Ppid),
		Start: uint64(st.Sec)*1_000_000 + uint64(st.Usec),
	}
}

// readToken returns the containment token in p's environment, or "" when
// it has none or the kernel refuses to show it (another user's process).
// kern.procargs2 holds the arguments, then the environment, each string
// NUL-terminated. A process in the middle of a fork, an exec or its exit
// answers EIO for a moment: that read is not final.
func readToken(p Proc) (string, bool) {
	b, err := unix.SysctlRaw("kern.procargs2", p.PID)
	if err != nil {
		return "", !errors.Is(err, unix.EIO)
	}
	return tokenIn(b), true
}

// Lookup returns the process at pid now, and whether it has ended but
// not been reaped (a zombie).
func Lookup(pid int) (p Proc, zombie bool, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return Proc{}, false, errGone
	}
	return procOf(kp), kp.Proc.P_stat == szomb, nil
}
