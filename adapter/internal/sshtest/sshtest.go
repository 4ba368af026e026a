//go:build linux

package sshtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readyBound bounds sshd's start and each wait this package does for a
// process to end: an upper bound for failure reporting, never a pause.
const readyBound = 20 * time.Second

// Server is a running private sshd and the client setup that reaches it.
type Server struct {
	// Host is an ssh host alias that logs in to the server.
	Host string
	// NoDDHost logs in to the same server on a second port whose
	// sessions run with a PATH that holds no dd.
	NoDDHost string
	// ClosedHost points at a 127.0.0.1 port nothing listens on.
	ClosedHost string
	// KnownHosts is the client's known_hosts file; empty until a
	// connection with accept-new, or TrustHostKey, fills it.
	KnownHosts string
	// Dir holds every file of the setup.
	Dir string

	port     int
	noDDPort int
	binDir   string
	hostPub  string
	cmd      *exec.Cmd
	logs     *lockedBuffer
	logDone  chan struct{}
}

// Start starts sshd -D -e -f <own config> on a free 127.0.0.1 port and
// stops it, and whatever it still runs, at cleanup. It skips the test when
// no sshd is installed (scripts/install-test-deps.sh installs it).
func Start(t *testing.T) *Server {
	t.Helper()
	sshd := findSSHD()
	if sshd == "" {
		t.Skip("sshd is not installed (scripts/install-test-deps.sh installs openssh-server)")
	}
	realSSH, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatalf("ssh client: %v", err)
	}
	// sshd's privilege separation needs this directory when run as root.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("sshd privilege-separation directory: %v", err)
	}
	dir := t.TempDir()
	s := &Server{
		Host:       "acpkit-sshtest",
		NoDDHost:   "acpkit-sshtest-nodd",
		ClosedHost: "acpkit-sshtest-closed",
		KnownHosts: filepath.Join(dir, "known_hosts"),
		Dir:        dir,
		binDir:     filepath.Join(dir, "bin"),
		logs:       &lockedBuffer{},
		logDone:    make(chan struct{}),
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	clientKey := filepath.Join(dir, "id_ed25519")
	for _, k := range []string{hostKey, clientKey} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "acpkit-sshtest", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(hostKey + ".pub")
	must(t, err)
	s.hostPub = strings.TrimSpace(string(pub))
	authorized, err := os.ReadFile(clientKey + ".pub")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), authorized, 0o600))
	must(t, os.WriteFile(s.KnownHosts, nil, 0o600))

	s.port, s.noDDPort = freePort(t), freePort(t)
	closed := freePort(t) // closed again at once: nothing listens there
	user := currentUser(t)
	emptyPath := filepath.Join(dir, "empty-path")
	must(t, os.Mkdir(emptyPath, 0o755))

	sshdConfig := filepath.Join(dir, "sshd_config")
	must(t, os.WriteFile(sshdConfig, []byte(strings.Join([]string{
		"Port " + strconv.Itoa(s.port),
		"Port " + strconv.Itoa(s.noDDPort),
		"ListenAddress 127.0.0.1",
		"HostKey " + hostKey,
		"PidFile none",
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		// The key files sit under /tmp, which is world-writable.
		"StrictModes no",
		"PrintMotd no",
		"LogLevel INFO",
		// NoDDHost's port runs the command under /bin/sh with a PATH that
		// holds no dd. The login shell's own startup files may reset PATH,
		// so it is set for the inner shell, after them.
		"Match LocalPort " + strconv.Itoa(s.noDDPort),
		"  ForceCommand /usr/bin/env PATH=" + emptyPath + ` /bin/sh -c "$SSH_ORIGINAL_COMMAND"`,
		"",
	}, "\n")), 0o600))

	clientConfig := filepath.Join(dir, "ssh_config")
	must(t, os.WriteFile(clientConfig, []byte(strings.Join([]string{
		"Host " + s.NoDDHost,
		"  Port " + strconv.Itoa(s.noDDPort),
		"Host " + s.ClosedHost,
		"  Port " + strconv.Itoa(closed),
		"Host *",
		"  HostName 127.0.0.1",
		"  Port " + strconv.Itoa(s.port),
		"  User " + user,
		"  IdentityFile " + clientKey,
		"  IdentitiesOnly yes",
		"  IdentityAgent none",
		"  UserKnownHostsFile " + s.KnownHosts,
		"  GlobalKnownHostsFile /dev/null",
		"  CheckHostIP no",
		"  UpdateHostKeys no",
		"  ControlMaster no",
		"  ControlPath none",
		"  LogLevel ERROR",
		"",
	}, "\n")), 0o600))

	must(t, os.Mkdir(s.binDir, 0o755))
	wrapper := "#!/bin/sh\n" +
		"printf '%s\\0' \"$@\" > " + quote(filepath.Join(dir, "argv.")) + "$$\n" +
		"exec " + quote(realSSH) + " -F " + quote(clientConfig) + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(s.binDir, "ssh"), []byte(wrapper), 0o755))

	s.cmd = exec.Command(sshd, "-D", "-e", "-f", sshdConfig)
	stderr, err := s.cmd.StderrPipe()
	must(t, err)
	must(t, s.cmd.Start())
	t.Cleanup(func() { s.stop(t) })
	ready := make(chan struct{})
	go s.collect(stderr, ready)
	timer := time.NewTimer(readyBound)
	defer timer.Stop()
	select {
	case <-ready:
	case <-s.logDone:
		t.Fatalf("sshd exited before listening:\n%s", s.Logs())
	case <-timer.C:
		t.Fatalf("sshd did not listen within %s:\n%s", readyBound, s.Logs())
	}
	return s
}

// collect keeps sshd's log and closes ready at its listening line.
func (s *Server) collect(stderr interface{ Read([]byte) (int, error) }, ready chan struct{}) {
	defer close(s.logDone)
	sc := bufio.NewScanner(stderr)
	want := map[string]bool{
		"Server listening on 127.0.0.1 port " + strconv.Itoa(s.port) + ".":     true,
		"Server listening on 127.0.0.1 port " + strconv.Itoa(s.noDDPort) + ".": true,
	}
	for sc.Scan() {
		line := sc.Text()
		s.logs.write(line + "\n")
		delete(want, strings.TrimSpace(line))
		if ready != nil && len(want) == 0 {
			close(ready)
			ready = nil
		}
	}
}

// Logs is what sshd wrote so far.
func (s *Server) Logs() string { return s.logs.String() }

// UseClient puts the ssh wrapper first on PATH for the rest of the test.
func (s *Server) UseClient(t *testing.T) {
	t.Setenv("PATH", s.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// Argv returns the arguments the adapter passed to the ssh client whose
// pid is given, as the wrapper recorded them.
func (s *Server) Argv(t *testing.T, pid string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "argv."+pid))
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// TrustHostKey writes the server's host key into KnownHosts, as an
// operator would for StrictHostKeyChecking=yes.
func (s *Server) TrustHostKey(t *testing.T) {
	t.Helper()
	line := fmt.Sprintf("[127.0.0.1]:%d %s\n", s.port, s.hostPub)
	must(t, os.WriteFile(s.KnownHosts, []byte(line), 0o600))
}

// DropConnections cuts every client connection the server holds by
// killing its per-connection sshd processes, as a network failure would
// end them: each ssh client then exits 255. The sessions' own processes
// lose their pipes and end; this process adopts and reaps them.
func (s *Server) DropConnections(t *testing.T) {
	t.Helper()
	withSubreaper(t, func() {
		tree := descendants(s.cmd.Process.Pid)
		var conns []int
		for _, pid := range tree {
			if comm(pid) == "sshd" {
				conns = append(conns, pid)
			}
		}
		if len(conns) == 0 {
			t.Fatalf("sshd holds no connection to drop:\n%s", s.Logs())
		}
		for _, pid := range conns {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		awaitAndReap(t, tree)
	})
}

// stop ends the server: the sessions it still runs get readyBound to end
// with their connections, the rest is killed, then the daemon.
func (s *Server) stop(t *testing.T) {
	tree := descendants(s.cmd.Process.Pid)
	if !allGone(tree, readyBound) {
		t.Errorf("sshd still runs sessions at cleanup (pids %v); killing them", tree)
		withSubreaper(t, func() {
			tree = descendants(s.cmd.Process.Pid)
			for _, pid := range tree {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
			awaitAndReap(t, tree)
		})
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	<-s.logDone
	if t.Failed() {
		t.Logf("sshd log:\n%s", s.Logs())
	}
}

// Gone reports whether the process pid ends within bound (it may already
// have). It waits on a pidfd, not by polling.
func Gone(pid int, bound time.Duration) bool { return allGone([]int{pid}, bound) }

// allGone waits until every pid has exited (zombies count as exited).
func allGone(pids []int, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return false
		}
		ms := int(max(time.Until(deadline), 0) / time.Millisecond)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		for errors.Is(err, unix.EINTR) {
			ms = int(max(time.Until(deadline), 0) / time.Millisecond)
			n, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		}
		_ = unix.Close(fd)
		if err != nil || n == 0 {
			return false
		}
	}
	return true
}

// withSubreaper runs fn with this process adopting orphaned descendants,
// so processes whose parent it killed are reaped here instead of being
// left as zombies under an init that may not reap. The tests using it do
// not run in parallel with others.
func withSubreaper(t *testing.T, fn func()) {
	var was int32
	must(t, unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0))
	must(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, uintptr(was), 0, 0, 0) }()
	fn()
}

// awaitAndReap waits for pids to exit and reaps those this process
// adopted. A pid whose parent still lives is reaped by that parent.
func awaitAndReap(t *testing.T, pids []int) {
	t.Helper()
	if !allGone(pids, readyBound) {
		t.Errorf("processes %v did not end within %s", pids, readyBound)
	}
	for _, pid := range pids {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil) // ECHILD: not ours
	}
}

// descendants lists every process below pid, parents before children.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppid(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// ppid reads a process's parent from /proc/<pid>/stat.
func ppid(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name is parenthesised and may hold spaces; the parent
	// is the second field after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

// comm is a process's command name.
func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// Cmdlines returns the argument lists of every process on the machine, so
// a test can show a value is on none of them, the remote side included.
func Cmdlines() map[int][]byte {
	out := map[int][]byte{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			p, _ := strconv.Atoi(e.Name())
			out[p] = b
		}
	}
	return out
}

func findSSHD() string {
	if p, err := exec.LookPath("sshd"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func currentUser(t *testing.T) string {
	t.Helper()
	// The password database, as sshd looks the user up; $USER may be unset.
	out, err := exec.Command("id", "-un").Output()
	must(t, err)
	return strings.TrimSpace(string(out))
}

// quote single-quotes s for the wrapper script.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is sshd's log, written by the collector, read by tests.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) write(s string) {
	l.mu.Lock()
	l.b.WriteString(s)
	l.mu.Unlock()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
