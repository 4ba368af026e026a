//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	referenceagent "acpkit.dev/conformance/refagent"
)

// At a terminal: acprun runs on a real pseudo-terminal (creack/pty), as a
// person runs it — its controlling terminal, stdin, stdout and stderr are
// the pty, Ctrl-C is the ^C byte the terminal turns into SIGINT for the
// foreground process group, and --permissions ask reads the answer typed
// there.

// terminal is one acprun process on a pty.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File // the pty's controlling side
	done chan struct{}

	mu     sync.Mutex
	out    bytes.Buffer
	closed bool
	waits  []termWait
}

type termWait struct {
	want string
	seen chan struct{}
}

// atTerminal starts argv (acprun and its arguments) on a 100×40 pty in
// dir, with env added to the test's environment.
func atTerminal(t *testing.T, dir string, env []string, argv ...string) *terminal {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	require.NoError(t, err)
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go term.read()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-term.done
		tty.Close()
	})
	return term
}

// read collects the output until the pty closes (EIO once acprun and
// everything holding the terminal have exited), then reaps acprun.
func (term *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := term.tty.Read(buf)
		term.mu.Lock()
		term.out.Write(buf[:n])
		term.closed = err != nil
		term.wake()
		term.mu.Unlock()
		if err != nil {
			break
		}
	}
	_ = term.cmd.Wait()
	close(term.done)
}

// escape matches the escape codes of the live view, which the tests
// read past.
var escape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// plain is s without escape codes, with the terminal's CRLF back to LF and
// the live view's wrapping joined back, for assertions on the words.
func plain(s string) string {
	s = escape.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n            ", " ")
}

// wake releases the waiters whose text arrived, or all once closed.
func (term *terminal) wake() {
	kept := term.waits[:0]
	shown := plain(term.out.String())
	for _, w := range term.waits {
		if term.closed || strings.Contains(shown, w.want) {
			close(w.seen)
			continue
		}
		kept = append(kept, w)
	}
	term.waits = kept
}

// waitFor returns once want has been written to the terminal.
func (term *terminal) waitFor(want string) {
	term.t.Helper()
	w := termWait{want: want, seen: make(chan struct{})}
	term.mu.Lock()
	term.waits = append(term.waits, w)
	term.wake()
	term.mu.Unlock()
	select {
	case <-w.seen:
	case <-time.After(time.Minute):
		term.t.Fatalf("%q never appeared; the terminal shows:\n%s", want, term.output())
	}
	require.Contains(term.t, plain(term.output()), want, "the terminal closed first")
}

// typeKeys writes keys as a person types them.
func (term *terminal) typeKeys(keys string) {
	term.t.Helper()
	_, err := term.tty.Write([]byte(keys))
	require.NoError(term.t, err)
}

// output is everything written to the terminal, escape codes and all.
func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// exit waits for acprun to end and returns its exit status.
func (term *terminal) exit() int {
	term.t.Helper()
	select {
	case <-term.done:
	case <-time.After(time.Minute):
		term.t.Fatalf("acprun did not exit; the terminal shows:\n%s", term.output())
	}
	return term.cmd.ProcessState.ExitCode()
}

// acprunAt starts the acprun under test at a terminal with TERM set.
func acprunAt(t *testing.T, termEnv []string, args ...string) *terminal {
	return atTerminal(t, t.TempDir(), termEnv, append([]string{filepath.Join(bin, "acprun")}, args...)...)
}

var xterm = []string{"TERM=xterm-256color", "NO_COLOR="}

// heldStart returns a command that starts the runtime of command only once
// release is called: until then the start waits, so whatever acprun shows
// while a start takes long is on the terminal, however fast the machine.
func heldStart(t *testing.T, command string) (held string, release func()) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	held = filepath.Join(dir, "start")
	script := "#!/bin/sh\nread _ < " + gate + "\nexec " + command + "\n"
	require.NoError(t, os.WriteFile(held, []byte(script), 0o700))
	// Opening the FIFO waits for the script to open it to read.
	return held, func() { require.NoError(t, os.WriteFile(gate, []byte("go\n"), 0)) }
}

func TestPTY_TheAgentsTextStreamsWithTheIndicator(t *testing.T) {
	// The start is held until the indicator is seen: a start quicker than
	// the indicator's first tick (100ms) showed none.
	command, release := heldStart(t, refagent("--slow-for", "3s"))
	term := acprunAt(t, xterm, "--command", command, "text slow")
	term.waitFor("starting the runtime")
	release()
	// The slow part streams " 1 2 3 …" every 100ms into one open message:
	// it is on the terminal while the turn is still running.
	term.waitFor("  agent     ")
	term.waitFor(" 3 4")
	assert.NotContains(t, plain(term.output()), "turn 1 completed", "streamed as it arrives, before the turn ends")
	require.Equal(t, 0, term.exit())
	out := term.output()
	assert.Contains(t, plain(out), "turn 1 completed")
	assert.Contains(t, out, "\x1b[", "colour and the indicator on a terminal")
	assert.Regexp(t, `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] starting the runtime`, plain(out), "the progress indicator ran")
}

func TestPTY_NoEscapesUnderTERMDumbOrNOCOLOR(t *testing.T) {
	for _, env := range [][]string{{"TERM=dumb", "NO_COLOR="}, {"TERM=xterm-256color", "NO_COLOR=1"}} {
		term := acprunAt(t, env, "--command", refagent("--slow-for", "1s"), "full slow")
		require.Equal(t, 0, term.exit(), "%v", env)
		out := term.output()
		assert.NotContains(t, out, "\x1b", "%v: no escape code at all", env)
		assert.Contains(t, plain(out), "  agent     ", "%v: the text still streams", env)
		assert.Contains(t, plain(out), "turn 1 completed", "%v", env)
	}
}

func TestPTY_OneCtrlCCancelsTheTurn(t *testing.T) {
	term := acprunAt(t, xterm, "--command", refagent(), "text slow", "never sent")
	term.waitFor(" 2 3")
	term.typeKeys("\x03")
	assert.Equal(t, 5, term.exit())
	out := plain(term.output())
	assert.Contains(t, out, "acprun: interrupted, cancelling (press Ctrl-C again to stop at once)")
	assert.Contains(t, out, "turn 1 cancelled")
	assert.NotContains(t, out, "turn 2/2", "no turn starts after the interrupt")
	assert.Contains(t, out, "cancelled (exit 5)")
}

// TestPTY_TwoCtrlCStopAtOnce: a runtime that ignores session/cancel and
// SIGTERM is stopped at the second Ctrl-C, and what the adapter logs
// about the forced stop does not land on the terminal as raw records.
func TestPTY_TwoCtrlCStopAtOnce(t *testing.T) {
	term := acprunAt(t, xterm, "--read-timeout", "10m", "--stop-grace", "10m",
		"--command", refagent("--ignore-sigterm"), "text slow-ignore-cancel")
	term.waitFor(" 2 3")
	began := time.Now()
	term.typeKeys("\x03")
	term.waitFor("press Ctrl-C again")
	term.typeKeys("\x03")
	assert.Equal(t, 5, term.exit())
	assert.Less(t, time.Since(began), 30*time.Second, "neither the read timeout nor the grace window is waited for")
	out := plain(term.output())
	after := out[strings.Index(out, "stopping the runtime at once"):]
	assert.NotContains(t, after, "level=", "no raw log record after the forced stop:\n%s", after)
	assert.Contains(t, after, "cancelled (exit 5)")
}

// TestPTY_AskTakesYesOrNoAtTheTerminal: --permissions ask puts the
// question on the terminal; y lets the reference agent write its file, n
// (or Enter) does not.
func TestPTY_AskTakesYesOrNoAtTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		answer  string
		written bool
		line    string
	}{
		{"y\r", true, `approved a permission request: selected "Allow" (allow_once) for edit "Write refagent-note.txt": approved at the terminal`},
		{"n\r", false, "refused a permission request: declined at the terminal"},
		{"\r", false, "refused a permission request: declined at the terminal"},
	} {
		dir := t.TempDir()
		term := atTerminal(t, dir, xterm, filepath.Join(bin, "acprun"), "--permissions", "ask", "write")
		term.waitFor(`acprun: the runtime asks permission for "Write refagent-note.txt" (kind: edit)`)
		term.waitFor(`options: Allow (allow_once), Reject (reject_once)`)
		term.waitFor(`allow with "Allow"? [y/N] `)
		term.typeKeys(tc.answer)
		require.Equal(t, 0, term.exit(), "%q", tc.answer)
		assert.Contains(t, plain(term.output()), tc.line, "%q", tc.answer)
		_, err := os.Stat(filepath.Join(dir, referenceagent.WriteFile))
		assert.Equal(t, tc.written, err == nil, "%q: the write happened only on y", tc.answer)
	}
}

// TestPTY_CtrlCWithdrawsTheQuestion: Ctrl-C while acprun asks cancels
// the turn; nothing is approved.
func TestPTY_CtrlCWithdrawsTheQuestion(t *testing.T) {
	dir := t.TempDir()
	term := atTerminal(t, dir, xterm, filepath.Join(bin, "acprun"), "--permissions", "ask", "write")
	term.waitFor("[y/N] ")
	term.typeKeys("\x03")
	assert.Equal(t, 5, term.exit())
	assert.NotContains(t, plain(term.output()), "approved a permission request")
	assert.NoFileExists(t, filepath.Join(dir, referenceagent.WriteFile))
}

// TestPTY_READMEAskApprovesAWrite: the README's own line, after its
// `make install`, at a terminal, answered y.
func TestPTY_READMEAskApprovesAWrite(t *testing.T) {
	installedBin := installed(t)
	blocks := readmeBlocks(t, runsAtATerminal)
	require.Len(t, blocks, 1)
	require.Len(t, blocks[0], 1)
	line := blocks[0][0]
	dir := t.TempDir()
	term := atTerminal(t, dir, append(xterm, "PATH="+installedBin+string(os.PathListSeparator)+os.Getenv("PATH")), "bash", "-c", line)
	term.waitFor("[y/N] ")
	term.typeKeys("y\r")
	require.Equal(t, 0, term.exit(), term.output())
	assert.FileExists(t, filepath.Join(dir, referenceagent.WriteFile))
}

// TestPTY_ReplayRefusesATerminal: `acprun replay FILE` typed at a terminal
// would wait forever for a client; it says so instead.
func TestPTY_ReplayRefusesATerminal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hello.jsonl")
	r := invocation{args: []string{"--record", file, "hello"}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	term := acprunAt(t, xterm, "replay", file)
	assert.Equal(t, 2, term.exit())
	assert.Contains(t, plain(term.output()), "acprun replay: standard input is a terminal; a replay is a runtime for a client to drive")
}
