//go:build linux

package adapter

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/sshtest"
	"acpkit.dev/adapter/internal/stderrlog"
)

// The sessions below run the reference agent over SSH against a private
// sshd on 127.0.0.1 (internal/sshtest). The "remote host" is this
// machine, so a test can look at the far side's files and processes.

// goneBound bounds the wait for a remote runtime to end with its
// connection: an upper bound for failure reporting, never a pause.
const goneBound = 10 * time.Second

// sshHarness is a harness whose ssh client reaches srv.
func sshHarness(t *testing.T) (*harness, *sshtest.Server) {
	t.Helper()
	srv := sshtest.Start(t)
	srv.UseClient(t)
	refagent(t) // built before PATH matters to anyone else
	return newHarness(t), srv
}

// remoteRef starts the reference agent on host: pre is remote shell text
// run first, in the workspace, before exec'ing the agent with flags.
func (h *harness) remoteRef(host, pre string, flags ...string) StartParams {
	p := h.params()
	p.SSHHost = host
	p.Agent.Command = pre + "exec " + strings.Join(append([]string{refagent(h.t)}, flags...), " ")
	return p
}

// remotePID reads the pid the remote shell wrote (exec keeps it).
func remotePID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

func TestSSH2_SSH3_AU4_TD14_FullSessionOverSSH(t *testing.T) {
	h, srv := sshHarness(t)
	secret := "a 'quoted' \"double\"  value with spaces\nand a newline\n"
	t.Setenv("ACPKIT_SSH_TOKEN", secret)
	t.Setenv("ACPKIT_SSH_LOCAL_ONLY", "stays here")
	mcp := filepath.Join(h.dir, "mcp.json")
	require.NoError(t, os.WriteFile(mcp, []byte(`{"mcpServers":{"tracker":{"command":"/bin/true","env":{"TRACKER_TOKEN":"abc"}}}}`), 0o600))
	record := filepath.Join(h.dir, "record.jsonl")
	envOut := filepath.Join(h.dir, "remote-env")
	pidFile := filepath.Join(h.dir, "remote-pid")

	p := h.remoteRef(srv.Host,
		`printf '%s|%s' "$ACPKIT_SSH_TOKEN" "${ACPKIT_SSH_LOCAL_ONLY-unset}" > `+launch.ShellQuote(envOut)+
			` && echo $$ > `+launch.ShellQuote(pidFile)+` && `,
		"--record-mcp", record)
	p.SSHPassEnv = []string{"ACPKIT_SSH_TOKEN"}
	p.MCPConfigPath = mcp
	s := h.startWith(p)
	assert.Equal(t, "sess-1", s.ID)
	assert.Equal(t, srv.Argv(t, s.AgentPID)[len(srv.Argv(t, s.AgentPID))-2], srv.Host, "AgentPID is the ssh relay's (SP-9)")

	got, err := os.ReadFile(envOut)
	require.NoError(t, err)
	assert.Equal(t, secret+"|unset", string(got), "SSH-3/AU-4: the named variable byte-exact; nothing else of ours")
	for pid, line := range sshtest.Cmdlines() {
		assert.NotContains(t, string(line), `'quoted' "double"`, "pid %d has the value on its command line", pid)
	}

	r, err, ev := h.turn(s, "first")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Equal(t, []string{
		"this session started with a declared capability gap in: tool servers, token counts, session continuation",
		"Hello, from the reference agent.",
		"You said: first",
	}, ev.texts(), "CAP-2: tool servers start in the gap on a remote launch")
	r, err, ev = h.turn(s, "second")
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, r.Outcome)
	assert.Equal(t, "You said: second", ev.lastText("You said"))

	ctx, cancel, _, cb := cancelOnChunk()
	defer cancel()
	r, err = h.a.RunTurn(ctx, s, TurnParams{Prompt: "slow", OnEvent: cb})
	assert.ErrorIs(t, err, &Error{Kind: KindTurnCancelled, Message: "turn cancelled"})
	assert.Equal(t, EventTurnCancelled, r.Outcome)

	// MCP-2: the configured server never reached the remote runtime.
	lines := readLines(t, record)
	require.Len(t, lines, 1)
	var rec struct {
		Method     string            `json:"method"`
		MCPServers []json.RawMessage `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	assert.Equal(t, "session/new", rec.Method)
	assert.NotNil(t, rec.MCPServers)
	assert.Empty(t, rec.MCPServers)

	far := remotePID(t, pidFile)
	h.stop(s)
	assert.Equal(t, 255, s.s.proc.Status().Code, "ssh exits 255 on teardown's SIGTERM")
	assert.True(t, s.s.proc.Status().Stopped, "which is our signal, not a connection failure")
	assert.Empty(t, h.log.find("agent did not exit inside the graceful period and was force-terminated"),
		"TD-14: the relay ends on the graceful signal")
	assert.True(t, sshtest.Gone(far, goneBound), "TD-14: no remote runtime is left after StopSession")
}

func TestSS4_SSH4_ClosedPortIsSSHConnectionFailed(t *testing.T) {
	h, srv := sshHarness(t)
	_, err := h.a.StartSession(context.Background(), h.remoteRef(srv.ClosedHost, ""))
	require.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "ssh connection failed"})
	assert.Contains(t, err.Error(), "Connection refused", "ssh's own words are the detail")
	var tail *stderrlog.TailError
	assert.ErrorAs(t, err, &tail)
}

func TestSS4_OwnSignalIsNoConnectionFailure(t *testing.T) {
	h, srv := sshHarness(t)
	p := h.params()
	p.SSHHost = srv.Host
	p.Agent.Command = "exec cat >/dev/null" // never answers initialize
	// The start's context ends during the handshake: the SP-3 binding
	// sends SIGTERM to the relay, and ssh exits 255 on it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := h.a.StartSession(ctx, p)
	require.ErrorIs(t, err, &Error{Kind: KindTurnCancelled, Message: "session start was cancelled"})
	assert.NotContains(t, err.Error(), "ssh connection failed")
}

func TestSSH1_StrictHostKeyCheckingReachesSSH(t *testing.T) {
	h, srv := sshHarness(t)
	p := h.remoteRef(srv.Host, "")
	p.SSHStrictHostKeyChecking = "yes"
	_, err := h.a.StartSession(context.Background(), p)
	require.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "ssh connection failed"}, "yes refuses an unknown host key")
	assert.Contains(t, err.Error(), "Host key verification failed")

	srv.TrustHostKey(t)
	h.startWith(p)
}

func TestSSH1_InvalidStrictHostKeyCheckingStartsNothing(t *testing.T) {
	h, srv := sshHarness(t)
	p := h.remoteRef(srv.Host, "")
	p.SSHStrictHostKeyChecking = "ask"
	_, err := h.a.StartSession(context.Background(), p)
	require.ErrorIs(t, err, ErrSSHParam)
	assert.Equal(t, Kind(""), KindOf(err), "no kind: never retried")
	assert.Equal(t, RetryNever, KindOf(err).Retry())
	matches, _ := filepath.Glob(filepath.Join(srv.Dir, "argv.*"))
	assert.Empty(t, matches, "no ssh was started")

	p.SSHStrictHostKeyChecking = ""
	p.SSHPassEnv = []string{"NOT-A-NAME"}
	_, err = h.a.StartSession(context.Background(), p)
	require.ErrorIs(t, err, ErrSSHParam)
}

func TestSSH4_MissingRemoteBinaryIsEarlyExit127(t *testing.T) {
	h, srv := sshHarness(t)
	p := h.params()
	p.SSHHost = srv.Host
	p.Agent.Command = "acpkit-no-such-runtime --acp"
	_, err := h.a.StartSession(context.Background(), p)
	require.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before responding: exit status 127"})
	assert.Contains(t, err.Error(), "acpkit-no-such-runtime", "the remote shell's message is in the tail")
	assert.Contains(t, err.Error(), "not found")
}

func TestSSH3_RemoteWithoutDDIsEarlyExitReport(t *testing.T) {
	h, srv := sshHarness(t)
	t.Setenv("ACPKIT_SSH_TOKEN", "value")
	p := h.remoteRef(srv.NoDDHost, "")
	p.SSHPassEnv = []string{"ACPKIT_SSH_TOKEN"}
	_, err := h.a.StartSession(context.Background(), p)
	require.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent runtime exited before responding: exit status 1"})
	assert.Contains(t, err.Error(), "sortie: dd is required on the remote host to receive environment variables")
	assert.NotEqual(t, KindAgentNotFound, KindOf(err))
}

func TestSSH4_DI6_ConnectionLostMidTurn(t *testing.T) {
	h, srv := sshHarness(t)
	pidFile := filepath.Join(h.dir, "remote-pid")
	s := h.startWith(h.remoteRef(srv.Host, `echo $$ > `+launch.ShellQuote(pidFile)+` && `))
	far := remotePID(t, pidFile)
	started := make(chan struct{})
	var once sync.Once
	type result struct {
		r   TurnResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "slow", OnEvent: func(e Event) {
			if e.Type == EventNotification && e.Message == "" {
				once.Do(func() { close(started) })
			}
		}})
		done <- result{r, err}
	}()
	<-started
	srv.DropConnections(t) // the connection's sshd is killed mid-turn
	res := <-done
	r, err := res.r, res.err
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent's connection ended before a response arrived"})
	assert.Equal(t, EventTurnFailed, r.Outcome)
	<-s.s.proc.Exited()
	assert.Equal(t, 255, s.s.proc.Status().Code)
	assert.False(t, s.s.proc.Status().Stopped, "the connection failed on its own")
	assert.True(t, sshtest.Gone(far, goneBound))
}

func TestSSH4_DI6_RemoteExit127MidTurn(t *testing.T) {
	h, srv := sshHarness(t)
	s := h.startWith(h.remoteRef(srv.Host, ""))
	_, err, _ := h.turn(s, "exit=127")
	assert.ErrorIs(t, err, &Error{Kind: KindPortExit, Message: "the agent's connection ended before a response arrived"})
	<-s.s.proc.Exited()
	assert.Equal(t, 127, s.s.proc.Status().Code, "ssh passes the remote status on")
}

func TestSSH1_AwkwardWorkspaceIsOneLiteralWord(t *testing.T) {
	h, srv := sshHarness(t)
	ws := filepath.Join(h.dir, "-lead 'single' \"double\" $HOME `id` \\ * ? [x] ; & | < > # ~ é\nnewline\ttab")
	require.NoError(t, os.Mkdir(ws, 0o755))
	pwdOut := filepath.Join(h.dir, "remote-pwd")
	p := h.remoteRef(srv.Host, `printf '%s' "$PWD" > `+launch.ShellQuote(pwdOut)+` && `)
	p.WorkspacePath = ws
	s := h.startWith(p)
	got, err := os.ReadFile(pwdOut)
	require.NoError(t, err)
	assert.Equal(t, ws, string(got))
	_, err, _ = h.turn(s, "text")
	require.NoError(t, err)
}

func TestSSH5_LT4_MissingLocalSSHIsAgentNotFound(t *testing.T) {
	h := newHarness(t)
	t.Setenv("PATH", t.TempDir())
	p := h.params()
	p.SSHHost = "build-host"
	_, err := h.a.StartSession(context.Background(), p)
	assert.ErrorIs(t, err, &Error{Kind: KindAgentNotFound, Message: "ssh binary not found on orchestrator host"})
	assert.Equal(t, RetryNever, KindOf(err).Retry())
}
