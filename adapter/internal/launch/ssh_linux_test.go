//go:build linux

package launch

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/sshtest"
)

// remote resolves and launches command on host over the test server; the
// cleanup kills and reaps the relay whatever the test did.
func remote(t *testing.T, host, command, strict string, passEnv ...string) (*Process, Target) {
	t.Helper()
	target, err := Resolve(t.TempDir(), command, host)
	require.NoError(t, err)
	p, err := SSH{Relay: Local{}}.Launch(t.Context(), target.SSHSpec(strict, passEnv, 0))
	require.NoError(t, err)
	t.Cleanup(func() {
		p.CloseStdin()
		p.Kill()
		<-p.Exited()
		_ = p.Stdout().Close()
		_ = p.Stderr().Close()
	})
	return p, target
}

func TestSSH1_SSH2_LT4_ArgvAsLaunchedOneRelayInItsOwnGroup(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	p, target := remote(t, srv.Host, "echo hello from $(hostname -s 2>/dev/null || echo remote); cat", "")
	assert.Equal(t, filepath.Join(srv.Dir, "bin", "ssh"), target.Program, "LT-4: the ssh found on PATH")

	out := bufio.NewReader(p.Stdout())
	_, err := io.WriteString(p.Stdin(), "ping\n")
	require.NoError(t, err)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "hello from "), line)
	line, err = out.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ping\n", line, "one relay carries the session's stream (SSH-2)")

	assert.Equal(t, SSHArgs("accept-new", srv.Host, "cd -- '"+target.Workspace+"' && echo hello from $(hostname -s 2>/dev/null || echo remote); cat"),
		srv.Argv(t, p.PID()), "SSH-1: exactly these arguments")
	pid, _ := strconv.Atoi(p.PID())
	pgid, err := syscall.Getpgid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, pgid, "the relay leads its own process group")

	p.CloseStdin()
	<-p.Exited()
	assert.Equal(t, ExitStatus{Code: 0}, p.Status(), "the remote side ended with its stdin")
}

func TestSSH3_ValuesOnNoArgvAndOnlyNamedVariablesReachTheRemote(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	value := "it's a \"quoted\" value  with spaces\nand a newline $HOME `id`\n"
	t.Setenv("ACPKIT_SSH_SECRET", value)
	t.Setenv("ACPKIT_SSH_BLANK", "   ")
	t.Setenv("ACPKIT_SSH_NOT_NAMED", "local only")
	p, _ := remote(t, srv.Host,
		`printf '%s|%s|%s|' "$ACPKIT_SSH_SECRET" "${ACPKIT_SSH_BLANK-unset}" "${ACPKIT_SSH_NOT_NAMED-unset}"; cat`,
		"", "ACPKIT_SSH_SECRET", "ACPKIT_SSH_BLANK")
	_, err := io.WriteString(p.Stdin(), "ping\n")
	require.NoError(t, err)
	want := value + "|unset|unset|ping\n"
	got := make([]byte, len(want))
	_, err = io.ReadFull(p.Stdout(), got)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "byte-exact; blank and unnamed variables stay behind")

	// While the session runs, neither the relay nor any process on this
	// machine (the remote side included) has a value on its command line.
	ownLine, err := os.ReadFile("/proc/" + p.PID() + "/cmdline")
	require.NoError(t, err)
	assert.Contains(t, string(ownLine), "ACPKIT_SSH_SECRET", "the name travels")
	for pid, line := range sshtest.Cmdlines() {
		assert.False(t, bytes.Contains(line, []byte("quoted\" value")), "pid %d has the value on its command line: %q", pid, line)
	}
	p.CloseStdin()
	<-p.Exited()
	assert.Equal(t, 0, p.Status().Code)
}

// A remote host without dd ends with exit status 1, as Sortie's own
// preamble reader does (its tests pin "exit status 1"), not 127: 127 is
// the remote shell's "command not found", which SSH-4 keeps for a missing
// runtime.
func TestSSH3_RemoteWithoutDDExits1WithTheMessage(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	t.Setenv("ACPKIT_SSH_SECRET", "v")
	p, _ := remote(t, srv.NoDDHost, "/bin/cat", "", "ACPKIT_SSH_SECRET")
	stderr, err := io.ReadAll(p.Stderr())
	require.NoError(t, err)
	<-p.Exited()
	assert.Equal(t, 1, p.Status().Code)
	assert.Equal(t, MsgDDMissing+"\n", string(stderr))
}

func TestSSH4_ClosedPortExits255(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	p, _ := remote(t, srv.ClosedHost, "cat", "")
	<-p.Exited()
	assert.Equal(t, ExitStatus{Code: 255}, p.Status(), "ended on its own: not Stopped")
}

func TestSSH1_StrictYesRefusesAnUnknownHostKey(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	p, _ := remote(t, srv.Host, "true", HostKeyYes)
	<-p.Exited()
	assert.Equal(t, 255, p.Status().Code, "yes: the unknown key is refused")

	srv.TrustHostKey(t)
	p, _ = remote(t, srv.Host, "true", HostKeyYes)
	<-p.Exited()
	assert.Equal(t, 0, p.Status().Code, "yes: a known key is accepted")
}

func TestTD14_SS4_SignalReachesTheRelayAndTheRemoteEndsWithIt(t *testing.T) {
	srv := sshtest.Start(t)
	srv.UseClient(t)
	p, _ := remote(t, srv.Host, "echo $$; exec cat", "")
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	remotePID, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)

	p.Terminate()
	<-p.Exited()
	st := p.Status()
	assert.Equal(t, 255, st.Code, "ssh exits 255 on SIGTERM")
	assert.True(t, st.Stopped, "our own signal: no connection failure")
	assert.True(t, sshtest.Gone(remotePID, ioBound), "the remote runtime ends with its connection")
}
