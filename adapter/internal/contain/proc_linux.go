package contain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procRoot is where the process table is read.
const procRoot = "/proc"

// listProcs reads every process from /proc. A process that ends while it
// is read is left out.
func listProcs() ([]Proc, error) {
	return readProcs(nil)
}

// readProcs reads the pids in /proc, and the stat of each that prev does
// not already hold.
func readProcs(prev map[int]Proc) ([]Proc, error) {
	d, err := os.Open(procRoot)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(names))
	var buf [statBufSize]byte
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		p, ok := prev[pid]
		if !ok {
			st, err := readStatInto(pid, buf[:])
			if err != nil {
				continue
			}
			p = st.Proc
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// procTable is the tracked set's view of /proc. It keeps each process's
// stat from the read that first listed it: a pid still listed at the next
// read is taken to be the same process, so a steady table costs one
// directory read, not a file per process. A pid reused between two reads
// is thus taken for its predecessor; the tracked set confirms a parent
// before it adopts a child through it, and signals only through handles
// that check the start, so the mistake can hide a process from it, never
// make it signal one it should not.
type procTable struct{ prev map[int]Proc }

func newPlatformSource() source { return &procTable{} }

func (t *procTable) list() ([]Proc, error) {
	procs, err := readProcs(t.prev)
	if err != nil {
		return nil, err
	}
	t.prev = make(map[int]Proc, len(procs))
	for _, p := range procs {
		t.prev[p.PID] = p
	}
	return procs, nil
}

// token is final whatever the read met: another user's environment
// stays unreadable, and a process that ended is gone.
func (*procTable) token(p Proc) (string, bool) { return readToken(p), true }

// statBufSize holds any /proc/PID/stat line: 52 numbers and a comm of at
// most 64 bytes.
const statBufSize = 2048

// stat is what containment reads from /proc/PID/stat.
type stat struct {
	Proc
	// State is the one-letter state: R, S, D, Z (zombie), X (dead), T, …
	State byte
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (stat, error) {
	var buf [statBufSize]byte
	return readStatInto(pid, buf[:])
}

// readStatInto reads /proc/PID/stat into buf with plain system calls: a
// read of the table opens one file per process, and os.Open's poller
// registration would double the calls.
func readStatInto(pid int, buf []byte) (stat, error) {
	fd, err := unix.Open(procRoot+"/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return stat{}, err
	}
	n, err := unix.Read(fd, buf)
	_ = unix.Close(fd)
	if err != nil {
		return stat{}, err
	}
	return parseStat(buf[:n])
}

// errBadStat is a /proc/PID/stat line of an unexpected shape.
var errBadStat = errors.New("contain: malformed /proc stat line")

// parseStat decodes a /proc/PID/stat line: "pid (comm) state ppid … "
// with starttime the 22nd field. comm may hold spaces and parentheses, so
// the fields after it are counted from its last ')'.
func parseStat(b []byte) (stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return stat{}, errBadStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return stat{}, fmt.Errorf("%w: pid: %q", errBadStat, b[:open])
	}
	// Fields 3 (state) onwards; starttime, field 22, is the 20th of them.
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, errBadStat
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil || ppid < 0 {
		return stat{}, fmt.Errorf("%w: ppid: %q", errBadStat, f[1])
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("%w: starttime: %q", errBadStat, f[19])
	}
	return stat{Proc: Proc{PID: pid, PPID: ppid, Start: start}, State: f[0][0]}, nil
}

// readToken returns the containment token in p's environment, or "" when
// it has none or the environment cannot be read (another user's process,
// or one that ended). The environment is the one p was exec'd with.
func readToken(p Proc) string {
	b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(p.PID) + "/environ")
	if err != nil {
		return ""
	}
	return tokenIn(b)
}

// Lookup returns the process at pid now, and whether it has ended but
// not been reaped (a zombie).
func Lookup(pid int) (p Proc, zombie bool, err error) {
	st, err := readStat(pid)
	if err != nil {
		return Proc{}, false, errGone
	}
	return st.Proc, st.State == 'Z' || st.State == 'X', nil
}
