//go:build unix

package refagent

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// proc is the refagent binary running in its own process group.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout lines; closed at end of stream
	exited chan error
}

func launch(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout = outW
	require.NoError(t, cmd.Start())
	outW.Close()
	p := &proc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 256), exited: make(chan error, 1)}
	go func() {
		defer close(p.lines)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		<-p.exited
		for range p.lines {
		}
	})
	return p
}

func (p *proc) send(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(p.t, err)
}

// expect reads stdout until a line containing want.
func (p *proc) expect(want string) {
	p.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			require.True(p.t, ok, "stdout ended before %q", want)
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			p.t.Fatalf("no line with %q within 10s", want)
		}
	}
}

// waitExit returns the exit status, failing the test after 10s.
func (p *proc) waitExit() int {
	p.t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // keep it for Cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(p.t, err)
		return 0
	case <-time.After(10 * time.Second):
		p.t.Fatal("process did not exit within 10s")
		return -1
	}
}

// stillRunningAfter reports whether the process is alive after d: the
// only way to observe that something does NOT happen is a bounded wait.
func (p *proc) stillRunningAfter(d time.Duration) bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return false
	case <-time.After(d):
		return true
	}
}

func (p *proc) handshake() {
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	p.expect(`"id":1`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	p.expect(`"sessionId":"sess-1"`)
}

func TestProcess_ExitsZeroWhenStdinCloses(t *testing.T) {
	p := launch(t)
	p.handshake()
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.waitExit())
}

func TestProcess_ExitWordExitsMidTurnWithItsStatus(t *testing.T) {
	p := launch(t)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"exit=42"}]}}`)
	p.expect(`agent_message_chunk`)
	assert.Equal(t, 42, p.waitExit())
}

func TestProcess_DieOnGarbage(t *testing.T) {
	p := launch(t, "--die-on-garbage")
	p.send(`this is not json`)
	assert.Equal(t, 3, p.waitExit())
}

func TestProcess_IgnoreStdinClose(t *testing.T) {
	p := launch(t, "--ignore-stdin-close")
	p.handshake()
	require.NoError(t, p.stdin.Close())
	assert.True(t, p.stillRunningAfter(300*time.Millisecond))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, -1, p.waitExit(), "SIGTERM still ends it (killed by signal)")
}

func TestProcess_IgnoreSIGTERM(t *testing.T) {
	p := launch(t, "--ignore-sigterm")
	p.handshake()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.True(t, p.stillRunningAfter(300*time.Millisecond))
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.waitExit())
}

func TestProcess_DescendantHoldsStdoutAfterExit(t *testing.T) {
	for _, mode := range []string{"group", "detached"} {
		t.Run(mode, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			p := launch(t, "--descendant", mode, "--descendant-pidfile", pidfile, "--descendant-for", "1m")
			p.handshake()
			b, err := os.ReadFile(pidfile)
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			pgid, err := unix.Getpgid(pid)
			require.NoError(t, err)
			if mode == "group" {
				assert.Equal(t, p.cmd.Process.Pid, pgid, "the descendant stays in the agent's group")
			} else {
				assert.Equal(t, pid, pgid, "the descendant leads its own group")
			}
			require.NoError(t, p.stdin.Close())
			assert.Equal(t, 0, p.waitExit())
			select {
			case _, open := <-p.lines:
				assert.True(t, open, "stdout must stay open while the descendant lives")
			case <-time.After(300 * time.Millisecond):
				// Still open: the descendant holds it.
			}
			require.NoError(t, unix.Kill(-pgid, unix.SIGKILL))
			for range p.lines {
			}
		})
	}
}

// TestTR17_ListenPrintsItsLoopbackURLFirst: the served agent's first stdout
// line is the URL to dial, on the loopback address asked for, and SIGTERM
// ends it with status 0.
func TestTR17_ListenPrintsItsLoopbackURLFirst(t *testing.T) {
	for transport, want := range map[string]string{
		"http": `^listening on http://127\.0\.0\.1:[0-9]+/acp$`,
		"ws":   `^listening on ws://127\.0\.0\.1:[0-9]+/acp$`,
		"tcp":  `^listening on tcp://127\.0\.0\.1:[0-9]+$`,
	} {
		t.Run(transport, func(t *testing.T) {
			p := launch(t, "--listen", "127.0.0.1:0", "--transport", transport)
			select {
			case l := <-p.lines:
				assert.Regexp(t, want, l)
			case <-time.After(10 * time.Second):
				t.Fatal("no first line within 10s")
			}
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			assert.Equal(t, 0, p.waitExit())
		})
	}
}
