//go:build unix

package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/adapter/cmd/acprun/internal/clitest"
	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/internal/realruntime"
)

// bin holds acprun, built once; `acprun refagent` is the reference agent.
var bin string

func TestMain(m *testing.M) {
	fakeagent.Main(map[string]fakeagent.Scenario{"scripted": scriptedAgent})
	realruntime.TapMain() // the real-runtime tests' wire tap runs as this binary
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "acprun-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, b := range []struct{ out, pkg string }{
		{"acprun", "acpkit.dev/adapter/cmd/acprun"},
	} {
		out, err := exec.Command("go", "build", "-race", "-o", filepath.Join(dir, b.out), b.pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b.pkg, err, out)
			return 1
		}
	}
	bin = dir
	code := m.Run()
	if installDir != "" {
		os.RemoveAll(installDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

// refagent is the reference agent's command line with extra flags: the
// one acprun itself carries.
func refagent(flags ...string) string {
	return strings.Join(append([]string{filepath.Join(bin, "acprun"), "refagent"}, flags...), " ")
}

// result is one finished acprun process.
type result struct {
	status int
	stdout []byte
	stderr string
}

// acprun runs the binary to completion in a fresh workspace.
func acprun(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{args: args}.do(t)
}

// normalizers replace what changes from run to run.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"time":"[^"]+"`), `"time":"TIME"`},
	{regexp.MustCompile(`"agent_pid":"[0-9]+"`), `"agent_pid":"PID"`},
	{regexp.MustCompile(`"session_id":"[^"]+"`), `"session_id":"SESSION"`},
	{regexp.MustCompile(`"tool_duration_ms":[0-9]+`), `"tool_duration_ms":0`},
}

// progress is the text a slow reference-agent turn streams while it waits:
// how much of it arrives depends on timing.
var progress = regexp.MustCompile(`"message":"( [0-9]+)+…?"`)

// withoutTiming drops what a slow turn's length decides: the empty
// notification of each streamed chunk (EV-3) and the progress text itself.
func withoutTiming(out []byte) []byte {
	var kept bytes.Buffer
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"notification"`)) && bytes.Contains(line, []byte(`"message":""`)) {
			continue
		}
		kept.Write(progress.ReplaceAll(line, []byte(`"message":"PROGRESS"`)))
	}
	return kept.Bytes()
}

func normalize(out []byte) []byte {
	for _, n := range normalizers {
		out = n.re.ReplaceAll(out, []byte(n.with))
	}
	return out
}

// golden compares normalized JSON lines with testdata/name.
func golden(t *testing.T, name string, out []byte) {
	t.Helper()
	clitest.Golden(t, name, normalize(out))
}

func last(t *testing.T, out []byte) map[string]any {
	t.Helper()
	all := clitest.JSONLines(t, out)
	require.NotEmpty(t, all)
	return all[len(all)-1]
}

// assertGone checks that the runtime process acprun reported has ended.
func assertGone(t *testing.T, out []byte) {
	t.Helper()
	for _, l := range clitest.JSONLines(t, out) {
		pid, err := strconv.Atoi(fmt.Sprint(l["agent_pid"]))
		if err != nil || pid <= 0 {
			continue
		}
		err = syscall.Kill(pid, 0)
		assert.ErrorIs(t, err, syscall.ESRCH, "the runtime (pid %d) outlived acprun", pid)
		return
	}
}

func TestE2E_CompletedTurn(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "full")
	require.Equal(t, 0, r.status, r.stderr)
	golden(t, "completed.jsonl", r.stdout)
	assertGone(t, r.stdout)
}

func TestE2E_PM1_RefusedPermissionTurnContinues(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "text permission")
	require.Equal(t, 0, r.status, r.stderr)
	golden(t, "permission_refused.jsonl", r.stdout)
}

func TestE2E_DI2_RefusalStopReasonExitsFour(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "text stop=refusal")
	require.Equal(t, 4, r.status, r.stderr)
	golden(t, "refusal.jsonl", r.stdout)
}

func TestE2E_PM2_InputRequiredExitsSix(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "text permission-allow-only", "never sent")
	require.Equal(t, 6, r.status, r.stderr)
	golden(t, "input_required.jsonl", r.stdout)
}

func TestE2E_PM3_ElicitationExitsSix(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "elicit")
	require.Equal(t, 6, r.status, r.stderr)
	res := last(t, r.stdout)
	assert.Equal(t, "input_required", res["exit_reason"])
	assert.Equal(t, "turn_input_required", res["error_kind"])
}

func TestE2E_DI6_CrashExitsFour(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent(), "text exit=7")
	require.Equal(t, 4, r.status, r.stderr)
	golden(t, "crash.jsonl", r.stdout)
}

func TestE2E_HS3_CredentialFailureAtStartExitsThree(t *testing.T) {
	r := acprun(t, "--json", "--command", refagent("--fail-new-session", "-32000"), "hello")
	require.Equal(t, 3, r.status, r.stderr)
	golden(t, "credential_failed.jsonl", r.stdout)
}

func TestE2E_AU2_VerifyCredential(t *testing.T) {
	r := acprun(t, "--json", "--verify-credential", "--command", refagent("--fail-initialize", "-32000"))
	require.Equal(t, 3, r.status, r.stderr)
	assert.Equal(t, "credential_unverified", last(t, r.stdout)["error_kind"])

	r = acprun(t, "--json", "--verify-credential", "--command", refagent("--delete"))
	require.Equal(t, 0, r.status, r.stderr)
	assert.Equal(t, "completed", last(t, r.stdout)["exit_reason"])
}

func TestE2E_LT3_AgentNotFoundExitsThree(t *testing.T) {
	r := acprun(t, "--json", "--command", "acpkit-no-such-runtime --acp", "hello")
	require.Equal(t, 3, r.status, r.stderr)
	golden(t, "agent_not_found.jsonl", r.stdout)
}

func TestE2E_UsageErrorExitsTwo(t *testing.T) {
	r := acprun(t, "--json")
	assert.Equal(t, 2, r.status)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no prompt given")
}

func TestE2E_TurnTimeoutExitsFour(t *testing.T) {
	r := acprun(t, "--json", "--turn-timeout", "200ms", "--command", refagent(), "slow")
	require.Equal(t, 4, r.status, r.stderr)
	res := last(t, r.stdout)
	assert.Equal(t, "turn_timeout", res["error_kind"])
}

// watched collects a stream's lines and lets a test wait for one.
type watched struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wants []want
	ended bool
}

type want struct {
	substr string
	seen   chan struct{}
}

// collect reads r to its end.
func (w *watched) collect(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.mu.Lock()
		w.buf.Write(sc.Bytes())
		w.buf.WriteByte('\n')
		w.wake()
		w.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
	w.mu.Lock()
	w.ended = true
	w.wake()
	w.mu.Unlock()
}

// wake releases every waiter whose text has arrived, or all at the end.
func (w *watched) wake() {
	kept := w.wants[:0]
	for _, x := range w.wants {
		if w.ended || strings.Contains(w.buf.String(), x.substr) {
			close(x.seen)
			continue
		}
		kept = append(kept, x)
	}
	w.wants = kept
}

// waitFor returns once substr has been printed (or the stream ended).
func (w *watched) waitFor(t *testing.T, substr string) {
	t.Helper()
	x := want{substr: substr, seen: make(chan struct{})}
	w.mu.Lock()
	w.wants = append(w.wants, x)
	w.wake()
	w.mu.Unlock()
	select {
	case <-x.seen:
	case <-time.After(time.Minute):
		t.Fatalf("%q never printed", substr)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Contains(t, w.buf.String(), substr, "the stream ended first")
}

func (w *watched) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// started is acprun running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr watched
	done           chan struct{}
}

func startAcprun(t *testing.T, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(filepath.Join(bin, "acprun"), args...), done: make(chan struct{})}
	s.cmd.Dir = t.TempDir()
	outPipe, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	errPipe, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	go func() {
		var wg sync.WaitGroup
		wg.Go(func() { s.stdout.collect(outPipe) })
		wg.Go(func() { s.stderr.collect(errPipe) })
		wg.Wait()
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// wait returns acprun's exit status.
func (s *started) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatal("acprun did not exit")
	}
	return s.cmd.ProcessState.ExitCode()
}

func TestE2E_TU7_FirstSIGINTCancelsTheTurn(t *testing.T) {
	s := startAcprun(t, "--json", "--command", refagent(), "text slow", "never sent")
	// The second message is reported once the slow part's text begins.
	s.stdout.waitFor(t, "You said: text slow")
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 5, s.wait(t), string(s.stderr.bytes()))
	golden(t, "cancelled.jsonl", withoutTiming(s.stdout.bytes()))
	assertGone(t, s.stdout.bytes())
}

func TestE2E_SecondSIGINTTearsDownAtOnce(t *testing.T) {
	// The agent ignores both session/cancel and SIGTERM, and the read
	// timeout is long: only the second interrupt can end this run quickly.
	s := startAcprun(t, "--json", "--read-timeout", "10m", "--stop-grace", "10m",
		"--command", refagent("--ignore-sigterm"), "text slow-ignore-cancel")
	s.stdout.waitFor(t, "You said: text slow-ignore-cancel")
	began := time.Now()
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	// Signals are not queued: send the second only once the first is seen.
	s.stderr.waitFor(t, "press Ctrl-C again")
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 5, s.wait(t), string(s.stderr.bytes()))
	assert.Less(t, time.Since(began), 30*time.Second, "the second interrupt does not wait for the read timeout or the grace window")
	assert.Equal(t, "cancelled", last(t, s.stdout.bytes())["exit_reason"])
	assertGone(t, s.stdout.bytes())
}

func TestE2E_DemoShowsACompleteSession(t *testing.T) {
	r := acprun(t, "--demo")
	require.Equal(t, 0, r.status, r.stderr)
	out := string(r.stdout)
	for _, want := range []string{"gap", "agent", "tool", "refused", "turn 1 completed", "turn 2 completed", "completed (exit 0)"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b", "output to a pipe is plain")
}

func TestE2E_ClosedStdoutStillStopsTheRuntime(t *testing.T) {
	cmd := exec.Command(filepath.Join(bin, "acprun"), "--json", "--command", refagent("--slow-for", "1s"), "text slow")
	cmd.Dir = t.TempDir()
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	first, err := bufio.NewReader(pipe).ReadBytes('\n')
	require.NoError(t, err)
	// The reader goes away, like `acprun --json | head -1`.
	require.NoError(t, pipe.Close())
	require.NoError(t, cmd.Wait(), "acprun finishes its run and exits normally")
	assertGone(t, first)
}

func TestE2E_SR5_ResumeContinuesASavedSession(t *testing.T) {
	agent := refagent("--load-session", "--state-dir", t.TempDir())
	first := acprun(t, "--json", "--command", agent, "remember this")
	require.Equal(t, 0, first.status, first.stderr)
	id := last(t, first.stdout)["session_id"]
	require.NotEmpty(t, id)

	second := acprun(t, "--json", "--resume", fmt.Sprint(id), "--command", agent, "and continue")
	require.Equal(t, 0, second.status, second.stderr)
	assert.Equal(t, id, last(t, second.stdout)["session_id"], "the saved session continued")
	golden(t, "resumed.jsonl", second.stdout)
}

func TestE2E_MCP7_DeclaredServersReachTheRuntime(t *testing.T) {
	dir := t.TempDir()
	conf, record := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "record.jsonl")
	require.NoError(t, os.WriteFile(conf, []byte(`{"mcpServers":{
		"tools": {"command": "/usr/bin/env", "args": ["true"], "env": {"B": "2", "A": "1"}},
		"off":   {"command": "/usr/bin/env", "enabled": false}}}`), 0o644))
	r := acprun(t, "--json", "--mcp-config", conf, "--command", refagent("--record-mcp", record), "hello")
	require.Equal(t, 0, r.status, r.stderr)
	got, err := os.ReadFile(record)
	require.NoError(t, err)
	var rec struct {
		Method     string          `json:"method"`
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(got), &rec))
	assert.Equal(t, "session/new", rec.Method)
	assert.JSONEq(t, `[{"name":"tools","command":"/usr/bin/env","args":["true"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]`, string(rec.MCPServers))
}

func TestE2E_SR7_ResumeWithoutContinuationSaysSoAndRequiredExitsThree(t *testing.T) {
	r := acprun(t, "--json", "--resume", "saved-1", "--command", refagent(), "hello")
	require.Equal(t, 0, r.status, r.stderr)
	lines := clitest.JSONLines(t, r.stdout)
	assert.Equal(t, "resume", lines[0]["type"])
	assert.Equal(t, false, lines[0]["continued"])
	assert.Equal(t, "the runtime advertises neither session/load nor session/resume", lines[0]["reason"])

	r = acprun(t, "--json", "--resume-policy", "required", "--resume", "saved-1", "--command", refagent(), "hello")
	assert.Equal(t, 3, r.status)
	res := last(t, r.stdout)
	assert.Equal(t, "resume_not_continued", res["exit_reason"])
}
