//go:build unix

package launch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"acpkit.dev/adapter/internal/contain"
	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// ioBound fails a read that a broken primitive would leave hanging. It is
// an upper bound for failure reporting, never a wait for success.
const ioBound = 20 * time.Second

// helperSpec launches this test binary in mode.
func helperSpec(t *testing.T, mode string, env ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return Spec{
		Program: exe,
		Args:    []string{"-test.run=^$"},
		Dir:     t.TempDir(),
		// A race-enabled child otherwise sleeps 1 s at exit.
		Env: append([]string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}, env...),
	}
}

// started is a launched helper with a line reader on its stdout.
type started struct {
	*Process
	out *bufio.Reader
}

// launch starts spec and registers a cleanup that kills the group, reaps
// and closes the read ends, whatever the test did.
func launch(t *testing.T, ctx context.Context, spec Spec) started {
	t.Helper()
	p, err := Local{}.Launch(ctx, spec)
	require.NoError(t, err)
	t.Cleanup(func() {
		p.Kill()
		<-p.Exited()
		_ = p.Stdin().Close()
		_ = p.Stdout().Close()
		_ = p.Stderr().Close()
		p.Release()
	})
	return started{Process: p, out: bufio.NewReader(p.Stdout())}
}

// line reads one stdout line, bounded by ioBound.
func (s started) line(t *testing.T) string {
	t.Helper()
	require.NoError(t, s.Stdout().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	l, err := s.out.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSuffix(l, "\n")
}

// waitExit waits for the reap, bounded by ioBound.
func (s started) waitExit(t *testing.T) ExitStatus {
	t.Helper()
	select {
	case <-s.Exited():
		return s.Status()
	case <-time.After(ioBound):
		t.Fatal("process was not reaped")
		return ExitStatus{}
	}
}

// stdoutOpen reports whether stdout is still held open by someone: a read
// with a short deadline times out instead of reaching end of stream. A
// closed stdout answers at once, so the deadline only bounds the probe.
func (s started) stdoutOpen(t *testing.T) bool {
	t.Helper()
	require.NoError(t, s.Stdout().(*os.File).SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err := s.out.ReadByte()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	require.ErrorIs(t, err, io.EOF)
	return false
}

// awaitStdoutEOF waits, bounded by ioBound, until every writer of stdout
// is gone.
func (s started) awaitStdoutEOF(t *testing.T) {
	t.Helper()
	require.NoError(t, s.Stdout().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	_, err := io.Copy(io.Discard, s.out)
	require.NoError(t, err, "stdout should reach end of stream")
}

func TestSP1_FullEnvironmentWithOverrides(t *testing.T) {
	t.Setenv("FOO", "parent")
	t.Setenv("BAR", "inherited")
	s := launch(t, t.Context(), helperSpec(t, "env", "FOO=override"))
	assert.Equal(t, "FOO=override", s.line(t))
	assert.Equal(t, "BAR=inherited", s.line(t))
	assert.Equal(t, ExitStatus{Code: 0}, s.waitExit(t))
}

func TestLT5_WorkspaceReverifiedAndUsedAsWorkingDirectory(t *testing.T) {
	spec := helperSpec(t, "env")
	s := launch(t, t.Context(), spec)
	s.line(t)
	s.line(t)
	want, err := filepath.EvalSymlinks(spec.Dir)
	require.NoError(t, err)
	assert.Equal(t, "WD="+want, s.line(t))
	s.waitExit(t)

	// A workspace that vanished between resolution and launch: nothing starts.
	gone := helperSpec(t, "env")
	require.NoError(t, os.Remove(gone.Dir))
	_, err = Local{}.Launch(t.Context(), gone)
	requireFault(t, err, contract.KindInvalidWorkspaceCwd, MsgMissingWorkspace)
}

func TestSP2_OwnProcessGroup(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "ids"))
	f := strings.Fields(s.line(t))
	require.Len(t, f, 2)
	assert.Equal(t, s.PID(), f[0])
	assert.Equal(t, f[0], f[1], "the child leads its own process group")
	assert.NotEqual(t, strconv.Itoa(syscall.Getpgrp()), f[1])
	s.waitExit(t)
}

func TestSP2_ReapLeavesReadEndsOpen(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "exit7"))
	assert.Equal(t, ExitStatus{Code: 7}, s.waitExit(t))
	assert.Equal(t, "exit status 7", s.Status().String())
	// Output written before the exit is still readable after the reap.
	require.NoError(t, s.Stderr().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	b, err := io.ReadAll(s.Stderr())
	require.NoError(t, err)
	assert.Equal(t, "failing on purpose\n", string(b))
}

func TestSP2_DescendantHoldsStdoutAfterReap(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "spawn-ingroup"))
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	assert.Equal(t, ExitStatus{Code: 0}, s.waitExit(t))
	// The runtime is reaped, its descendant still holds stdout: no EOF.
	assert.True(t, s.stdoutOpen(t))

	// The group kill reaches the descendant, which stayed in the group.
	s.Kill()
	reapOrphan(t, gpid)
	s.awaitStdoutEOF(t)
}

func TestSP2_KillEndsProcessIgnoringSIGTERM(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "trapterm"))
	require.Equal(t, "ready", s.line(t))
	s.Terminate()
	// An ignored signal is discarded when sent, so an answer now proves
	// the process outlived the graceful signal.
	_, err := io.WriteString(s.Stdin(), "ping\n")
	require.NoError(t, err)
	require.Equal(t, "pong", s.line(t))

	s.Kill()
	assert.Equal(t, ExitStatus{Code: -1, Signal: "killed", Stopped: true}, s.waitExit(t))
	assert.Equal(t, "signal: killed", s.Status().String())
}

func TestSP3_ContextEndSignalsGroupGracefully(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	spec := helperSpec(t, "block")
	spec.Grace = time.Hour // the kill must not be what ends it
	s := launch(t, ctx, spec)
	require.Equal(t, "ready", s.line(t))
	cancel()
	assert.Equal(t, ExitStatus{Code: -1, Signal: "terminated", Stopped: true}, s.waitExit(t))
}

func TestSP3_IgnoredSIGTERMKilledAfterGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	spec := helperSpec(t, "trapterm")
	spec.Grace = 50 * time.Millisecond
	s := launch(t, ctx, spec)
	require.Equal(t, "ready", s.line(t))
	cancel()
	assert.Equal(t, ExitStatus{Code: -1, Signal: "killed", Stopped: true}, s.waitExit(t))
}

func TestSP3_ContextDoneBeforeStartRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	before := openFDs(t)
	_, err := Local{}.Launch(ctx, helperSpec(t, "block"))
	f := requireFault(t, err, contract.KindPortExit, MsgStart)
	assert.ErrorIs(t, f, context.Canceled)
	assert.Equal(t, before, openFDs(t), "no descriptor left open")
}

func TestSP4_PipeFailuresArePortExit(t *testing.T) {
	for i, msg := range []string{MsgStdinPipe, MsgStdoutPipe, MsgStderrPipe} {
		t.Run(msg, func(t *testing.T) {
			boom := errors.New("no more pipes")
			n := 0
			l := Local{pipe: func() (*os.File, *os.File, error) {
				if n == i {
					return nil, nil, boom
				}
				n++
				return os.Pipe()
			}}
			spec := helperSpec(t, "block")
			before := openFDs(t)
			_, err := l.Launch(t.Context(), spec)
			f := requireFault(t, err, contract.KindPortExit, msg)
			assert.ErrorIs(t, f, boom)
			assert.Equal(t, before, openFDs(t), "pipes made before the failure are closed")
		})
	}
}

func TestSP4_StartFailureIsPortExit(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "agent")
	require.NoError(t, os.WriteFile(notExec, []byte("data"), 0o644))
	before := openFDs(t)
	_, err := Local{}.Launch(t.Context(), Spec{Program: notExec, Dir: dir})
	f := requireFault(t, err, contract.KindPortExit, MsgStart)
	assert.ErrorIs(t, f, os.ErrPermission)
	assert.Equal(t, before, openFDs(t))
}

func TestSP9_PIDIsDecimalString(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "ids"))
	pid, err := strconv.Atoi(s.PID())
	require.NoError(t, err)
	assert.Positive(t, pid)
	assert.Equal(t, strings.Fields(s.line(t))[0], s.PID())
	s.waitExit(t)
}

func TestTD3_TerminateNeverWaitsAndIgnoresFailures(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "block"))
	require.Equal(t, "ready", s.line(t))
	s.Terminate() // returns at once; the exit is observed separately
	assert.Equal(t, "signal: terminated", s.waitExit(t).String())
	// The group is gone now: signalling it again is harmless.
	s.Terminate()
	s.Kill()
}

func TestTD4_CloseStdinEndsAReadingRuntime(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "echo"))
	_, err := io.WriteString(s.Stdin(), "hi\n")
	require.NoError(t, err)
	require.Equal(t, "echo hi", s.line(t))
	s.CloseStdin()
	assert.Equal(t, ExitStatus{Code: 3}, s.waitExit(t))
	s.CloseStdin() // idempotent
}

func TestStatusIsZeroUntilReaped(t *testing.T) {
	s := launch(t, t.Context(), helperSpec(t, "block"))
	require.Equal(t, "ready", s.line(t))
	assert.Equal(t, ExitStatus{}, s.Status())
	select {
	case <-s.Exited():
		t.Fatal("exited before any signal")
	default:
	}
	s.Kill()
	assert.Equal(t, "killed", s.waitExit(t).Signal)
}

func TestExitStatusString(t *testing.T) {
	assert.Equal(t, "exit status 0", ExitStatus{}.String())
	assert.Equal(t, "exit status 127", ExitStatus{Code: 127}.String())
	assert.Equal(t, "signal: terminated", ExitStatus{Code: -1, Signal: "terminated"}.String())
	assert.Equal(t, "exit status unknown: no child", ExitStatus{Code: -1, Err: errors.New("no child")}.String())
}

func TestTD12_DetachedDescendantSurvivesGroupKill(t *testing.T) {
	spec := helperSpec(t, "spawn-detached")
	spec.Contain.Mode = contain.Off // the seed's mechanism alone
	s := launch(t, t.Context(), spec)
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	s.waitExit(t)

	s.Kill()
	// Not a defect: it left the group, so the group kill cannot reach it.
	require.NoError(t, unix.Kill(gpid, 0), "detached descendant is alive")
	assert.True(t, s.stdoutOpen(t), "and still holds stdout")

	require.NoError(t, unix.Kill(gpid, unix.SIGKILL))
	reapOrphan(t, gpid)
	s.awaitStdoutEOF(t)
}

// openFDs counts this process's open descriptors (Linux); elsewhere it
// returns 0 so comparisons hold trivially.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func TestSSH2_LocalLauncherRefusesARemoteSpec(t *testing.T) {
	_, err := Local{}.Launch(t.Context(), Spec{Program: "/bin/true", Dir: t.TempDir(), Remote: &Remote{Host: "h"}})
	var f *fault.Error
	require.ErrorAs(t, err, &f)
	assert.Equal(t, contract.KindPortExit, f.Kind)
	assert.Contains(t, err.Error(), "needs the SSH launcher")
}
