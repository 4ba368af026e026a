package contain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is a session's own cgroup v2 directory.
type cgroup struct {
	dir string
	// fd is open on dir until the runtime has started inside it; -1 after.
	fd int
}

// newCgroup creates a session's cgroup under parent, or under this
// process's own cgroup when parent is "". Creating it is the test of
// whether the orchestrator may: root may anywhere, a systemd unit with
// Delegate=yes may under its own cgroup, anyone may under a cgroup
// delegated to them.
func newCgroup(parent string) (*cgroup, error) {
	if parent == "" {
		var err error
		if parent, err = OwnCgroup(); err != nil {
			return nil, err
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(parent, &fs); err != nil {
		return nil, fmt.Errorf("cgroup parent: %w", &os.PathError{Op: "statfs", Path: parent, Err: err})
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("%s is not a cgroup v2 directory", parent)
	}
	dir, err := os.MkdirTemp(parent, "acpkit-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a cgroup: %w", err)
	}
	// cgroup.kill (Linux 5.14) kills a whole cgroup with no fork racing
	// it; without it this layer would be no better than the tracked set.
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("%s has no cgroup.kill (Linux 5.14 or later is needed)", parent)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

// Apply makes the start use the chosen layer: with a cgroup, the runtime
// is cloned straight into it (clone3 with CLONE_INTO_CGROUP), so it never
// runs outside it.
func (s *Setup) Apply(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = s.cg != nil
	if s.cg != nil {
		attr.CgroupFD = s.cg.fd
	}
}

// closeFD closes the directory once the start no longer needs it.
func (c *cgroup) closeFD() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

// kill kills every process in the cgroup and its descendants at once.
func (c *cgroup) kill() error {
	f, err := os.OpenFile(filepath.Join(c.dir, "cgroup.kill"), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("1")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// awaitEmpty waits until no process is left in the cgroup, or until
// deadline; it reports whether it is empty. cgroup.events says so
// ("populated 0"), and the kernel signals a change of that file as a
// modification, which inotify delivers.
func (c *cgroup) awaitEmpty(deadline time.Time) (bool, error) {
	events := filepath.Join(c.dir, "cgroup.events")
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return false, fmt.Errorf("inotify: %w", err)
	}
	// Non-blocking, so the runtime poller serves it and deadlines work.
	watch := os.NewFile(uintptr(fd), "inotify")
	defer watch.Close()
	// The watch comes first, so a change between the read and the wait
	// still wakes the wait.
	if _, err := unix.InotifyAddWatch(fd, events, unix.IN_MODIFY); err != nil {
		return false, fmt.Errorf("inotify on %s: %w", events, err)
	}
	buf := make([]byte, 4096)
	for {
		b, err := os.ReadFile(events)
		if err != nil {
			return false, err
		}
		populated, err := parsePopulated(b)
		if err != nil {
			return false, fmt.Errorf("%s: %w", events, err)
		}
		if !populated {
			return true, nil
		}
		if err := watch.SetReadDeadline(deadline); err != nil {
			return false, err
		}
		if _, err := watch.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, nil
			}
			return false, err
		}
	}
}

// errNoPopulated is a cgroup.events without a populated line.
var errNoPopulated = errors.New(`no "populated" line`)

// parsePopulated reads the populated flag of a cgroup.events file: lines
// of "key value", among them "populated 0" or "populated 1".
func parsePopulated(events []byte) (bool, error) {
	sc := bufio.NewScanner(bytes.NewReader(events))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k != "populated" {
			continue
		}
		switch v {
		case "0":
			return false, nil
		case "1":
			return true, nil
		}
		return false, fmt.Errorf("populated %q", v)
	}
	return false, errNoPopulated
}

// remove removes the cgroup, after any cgroup the runtime created inside
// it, deepest first. Each must be empty.
func (c *cgroup) remove() error {
	return removeTree(c.dir)
}

func removeTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return os.Remove(dir)
}

// OwnCgroup returns the directory of this process's cgroup v2: its path
// from /proc/self/cgroup, under whichever cgroup2 mount shows it (never an
// assumed /sys/fs/cgroup: a hybrid layout mounts cgroup2 at
// /sys/fs/cgroup/unified).
func OwnCgroup() (string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, ok := unifiedPath(self)
	if !ok {
		return "", errors.New("this process is in no cgroup v2 hierarchy")
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, m := range cgroup2Mounts(mountinfo) {
		if rel, ok := strings.CutPrefix(path, m.root); ok && (m.root == "/" || rel == "" || rel[0] == '/') {
			return filepath.Join(m.point, rel), nil
		}
	}
	return "", fmt.Errorf("no cgroup2 file system is mounted where this process's cgroup %s is visible", path)
}

// unifiedPath returns the cgroup v2 path of a /proc/PID/cgroup file: the
// "0::PATH" line.
func unifiedPath(b []byte) (string, bool) {
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "0::"); ok && strings.HasPrefix(p, "/") {
			return p, true
		}
	}
	return "", false
}

// mount is one cgroup2 mount: the hierarchy's directory it shows (root)
// and where (point).
type mount struct{ root, point string }

// cgroup2Mounts lists the cgroup2 mounts of a /proc/PID/mountinfo file,
// whose lines are "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] -
// FSTYPE SOURCE SUPEROPTIONS", paths octal-escaped.
func cgroup2Mounts(b []byte) []mount {
	var out []mount
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue
		}
		for i := 6; i+1 < len(f); i++ {
			if f[i] == "-" {
				if f[i+1] == "cgroup2" {
					out = append(out, mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])})
				}
				break
			}
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] <= '3' && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
