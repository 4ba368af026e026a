//go:build linux

package realruntime

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"acpkit.dev/internal/fakemodel"
	"acpkit.dev/internal/npmtest"
)

// Runtime is one real runtime set up for a test.
type Runtime struct {
	Spec
	// Path is the runtime's executable (Spec.Bin, installed).
	Path string
	// Env is what the runtime runs with beyond the inherited environment.
	Env []string
	// Home is the runtime's HOME.
	Home string
	// Mark is the value of the marker variable every process of the
	// runtime's tree inherits (see Survivors): decimal digits, so a
	// command can carry it in its arguments too (see Plan.Command).
	Mark string
}

// markVar is inherited by every process of a runtime's tree, so the tree
// can be found after the fact.
const markVar = "ACPKIT_REALRT_MARK"

// Option changes how Start sets a runtime up.
type Option func(*Runtime)

// CommandsUnasked starts the runtime so that it runs ShellCommand without
// asking, where its settings cannot say so for one command: with its
// Spec's extra arguments (Cline's --auto-approve, which approves every
// tool, so a start that also needs a refusal must not use it).
func CommandsUnasked(r *Runtime) { r.Args = append(slices.Clone(r.Args), r.unasked...) }

// ClineDefaultBackend runs Cline with its default session backend, which
// starts a detached hub daemon (`cline --cline-hub-daemon`, listening on
// 127.0.0.1:25463) that outlives every session unless containment ends it
// (issue #24); the suite's Cline runs the local backend.
func ClineDefaultBackend(r *Runtime) {
	r.Env = slices.DeleteFunc(slices.Clone(r.Env), func(kv string) bool { return kv == clineLocalBackend })
}

// Start sets up the runtime kind against fake: HOME in a temporary
// directory with the runtime's settings, the model API at fake, every
// proxy variable at fake (which forwards nothing) with loopback exempted.
func Start(t testing.TB, kind Kind, fake *fakemodel.Server, opts ...Option) Runtime {
	t.Helper()
	spec, ok := SpecOf(kind)
	if !ok {
		t.Fatalf("realruntime: unknown runtime %q", kind)
	}
	home := t.TempDir()
	r := Runtime{
		Spec: spec,
		Path: npmtest.Bin(t, string(kind), spec.Bin),
		Home: home,
		Mark: newMark(),
	}
	r.Env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"HTTPS_PROXY=" + fake.URL, "https_proxy=" + fake.URL,
		"HTTP_PROXY=" + fake.URL, "http_proxy=" + fake.URL,
		"ALL_PROXY=" + fake.URL, "all_proxy=" + fake.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		markVar + "=" + r.Mark,
	}
	spec.setup(t, &r, fake)
	for _, o := range opts {
		o(&r)
	}
	// Whatever a scenario shows left over is not left on the machine.
	t.Cleanup(r.killSurvivors)
	return r
}

// newMark returns a random mark: no other run on the machine, another
// test binary's included, carries it.
func newMark() string {
	var mark [8]byte
	_, _ = rand.Read(mark[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(mark[:])>>1, 10)
}

// Command is the runtime as one agent.command line: /usr/bin/env with the
// runtime's variables, then the runtime. No value contains a space, since
// the line is split on white space.
func (r Runtime) Command() string {
	return strings.Join(r.Argv(), " ")
}

// Argv is Command as an argument vector.
func (r Runtime) Argv() []string {
	argv := append([]string{"/usr/bin/env"}, r.Env...)
	return append(append(argv, r.Path), r.Args...)
}

// Tapped is Command run through the wire tap of TapMain: the runtime's
// stdin is copied to file as well. exe is the test binary (os.Args[0]).
func (r Runtime) Tapped(exe, file string) string {
	argv := append(append([]string{"/usr/bin/env"}, r.Env...), tapVar+"="+file, exe, r.Path)
	return strings.Join(append(argv, r.Args...), " ")
}

// Launch is the runtime's own argument vector and environment, without
// /usr/bin/env: for a grader that starts it itself.
func (r Runtime) Launch() (argv, env []string) {
	return append([]string{r.Path}, r.Args...), append(os.Environ(), r.Env...)
}

// Survivors returns the pids of live (not zombie) processes of the
// runtime's tree: those that inherited its marker variable, and those
// whose command line carries the mark (a command that was not given the
// runtime's environment).
func (r Runtime) Survivors() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if r.marked(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// marked reports whether pid is a live process of the runtime's tree.
func (r Runtime) marked(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	env, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return false
	}
	want := []byte("\x00" + markVar + "=" + r.Mark + "\x00")
	if !bytes.Contains(append([]byte{0}, env...), want) {
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !bytes.Contains(cmdline, []byte(r.commandToken())) {
			return false
		}
	}
	state, _, _ := stat(pid)
	return state != "" && state != "Z"
}

// stat reads a process's state and session id from /proc/PID/stat.
func stat(pid int) (state string, sid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	// The fields after the command, which is in parentheses and may
	// hold anything: state ppid pgrp session ...
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 4 {
		return "", 0, false
	}
	sid, _ = strconv.Atoi(f[3])
	return f[0], sid, true
}

// describe names a process for a failure message: pid, session and
// command line.
func describe(pid int) string {
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	_, sid, _ := stat(pid)
	cmd := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if len(cmd) > 120 {
		cmd = cmd[:120] + "…"
	}
	return fmt.Sprintf("pid %d (session %d): %s", pid, sid, cmd)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CountMethod counts the lines of a tapped wire file that carry method.
func CountMethod(t testing.TB, file, method string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("wire tap: %v", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	needle := `"method":"` + method + `"`
	for sc.Scan() {
		if strings.Contains(sc.Text(), needle) {
			n++
		}
	}
	return n
}
