package contain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// procRoot is where the process table is read.
const procRoot = "/proc"

// listProcs reads every process from /proc. A process that ends while it
// is read is left out.
func listProcs() ([]Proc, error) {
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
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := readStat(pid); err == nil {
			procs = append(procs, st.Proc)
		}
	}
	return procs, nil
}

// stat is what containment reads from /proc/PID/stat.
type stat struct {
	Proc
	// State is the one-letter state: R, S, D, Z (zombie), X (dead), T, …
	State byte
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
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
