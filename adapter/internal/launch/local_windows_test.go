//go:build windows

package launch

// These tests run under Wine in CI (scripts/wine-test.sh) with real child
// processes: the child is this test binary in a helper mode. The one thing
// Wine cannot show is a console control event reaching a process, so the
// CTRL_BREAK_EVENT call is covered through its seam; everything else is the
// real system call on a real process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/stderrlog"
	"acpkit.dev/adapter/internal/wintest"
	"acpkit.dev/internal/winjob"
)

// ioBound fails a read or wait that a broken primitive would leave
// hanging. It is an upper bound for failure reporting, never a wait for
// success.
const ioBound = 20 * time.Second

// helperSpec launches this test binary in mode, with a marker path the
// child creates first thing; marker returns that path.
func helperSpec(t *testing.T, mode string, env ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := wintest.TempDir(t)
	return Spec{
		Program: exe,
		Args:    []string{"-test.run=^$"},
		Dir:     dir,
		Env:     append([]string{helperEnv + "=" + mode, markerEnv + "=" + marker(dir)}, env...),
	}
}

// marker is the file a child launched by helperSpec(dir) creates first.
func marker(dir string) string { return filepath.Join(dir, "marker") }

// ran reports whether the child of spec has run any code.
func ran(t *testing.T, spec Spec) bool {
	t.Helper()
	_, err := os.Stat(marker(spec.Dir))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	return true
}

// started is a launched helper with a line reader on its stdout.
type started struct {
	*Process
	out *bufio.Reader
}

// launch starts spec with l and registers a cleanup that kills the job,
// reaps, closes the read ends and releases the job, whatever the test did.
func launch(t *testing.T, ctx context.Context, l Local, spec Spec) started {
	t.Helper()
	p, err := launchRetryingWine(t, ctx, l, spec)
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

// launchRetryingWine is l.Launch, tried once more when CreateProcess
// failed with ERROR_INTERNAL_ERROR. Wine now and then fails a process
// creation that way: its NtCreateUserProcess reports STATUS_INTERNAL_ERROR
// when the new process died while Wine itself was still setting it up,
// before any of the program's code (or the launcher's later steps) ran.
// The retry keeps that host flake out of the results; the log says so.
func launchRetryingWine(t *testing.T, ctx context.Context, l Local, spec Spec) (*Process, error) {
	t.Helper()
	p, err := l.Launch(ctx, spec)
	if errors.Is(err, windows.ERROR_INTERNAL_ERROR) {
		t.Logf("process creation failed inside Wine, retrying once: %v", err)
		p, err = l.Launch(ctx, spec)
	}
	return p, err
}

// line reads one stdout line, bounded by ioBound (the overlapped pipe has
// read deadlines).
func (s started) line(t *testing.T) string {
	t.Helper()
	require.NoError(t, s.Stdout().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	l, err := s.out.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimRight(l, "\r\n")
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

// awaitStdoutEOF waits, bounded by ioBound, until every writer of stdout
// is gone.
func (s started) awaitStdoutEOF(t *testing.T) {
	t.Helper()
	require.NoError(t, s.Stdout().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	_, err := io.Copy(io.Discard, s.out)
	require.NoError(t, err, "stdout should reach end of stream")
}

// job is the job handle of s's group (0 without one).
func (s started) job() windows.Handle {
	g := s.group.(*jobGroup)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.job
}

// watched is a process handle a test holds to see a process die.
type watched windows.Handle

// watch opens pid for waiting and querying; the handle also keeps the pid
// from being reused while the test looks at it.
func watch(t *testing.T, pid int) watched {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	require.NoError(t, err, "open process %d", pid)
	t.Cleanup(func() { _ = windows.CloseHandle(h) })
	return watched(h)
}

// awaitDeath waits, bounded by ioBound, for the process to end and returns
// its exit code.
func (w watched) awaitDeath(t *testing.T) uint32 {
	t.Helper()
	ev, err := windows.WaitForSingleObject(windows.Handle(w), uint32(ioBound/time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "process did not end")
	var code uint32
	require.NoError(t, windows.GetExitCodeProcess(windows.Handle(w), &code))
	return code
}

// alive reports whether the process is still running, without waiting.
func (w watched) alive(t *testing.T) bool {
	t.Helper()
	ev, err := windows.WaitForSingleObject(windows.Handle(w), 0)
	require.NoError(t, err)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

var procIsProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// inJob reports whether process h is a member of job.
func inJob(t *testing.T, h, job windows.Handle) bool {
	t.Helper()
	var in int32
	r, _, err := procIsProcessInJob.Call(uintptr(h), uintptr(job), uintptr(unsafe.Pointer(&in)))
	require.NotZero(t, r, "IsProcessInJob: %v", err)
	return in != 0
}

var procSuspendThread = windows.NewLazySystemDLL("kernel32.dll").NewProc("SuspendThread")

// suspendCounts lists the suspend count of every thread of pid, read by
// suspending each once more and resuming it again.
func suspendCounts(t *testing.T, pid int) []uint32 {
	t.Helper()
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	require.NoError(t, err)
	defer windows.CloseHandle(snap)
	var counts []uint32
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		require.NoError(t, err)
		prev, _, callErr := procSuspendThread.Call(uintptr(th))
		require.NotEqual(t, uint32(0xffffffff), uint32(prev), "SuspendThread: %v", callErr)
		_, err = windows.ResumeThread(th)
		require.NoError(t, err)
		_ = windows.CloseHandle(th)
		counts = append(counts, uint32(prev))
	}
	require.ErrorIs(t, err, windows.ERROR_NO_MORE_FILES)
	return counts
}

// records is a slog handler's output decoded, one map per record.
type records struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *records) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// logger returns a logger writing JSON records into r.
func (r *records) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// all decodes every record, without the time.
func (r *records) all(t *testing.T) []map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

// The test binary's base name, the `command` attribute of SP-5/SP-6.
func exeBase(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return filepath.Base(exe)
}

func TestSP5_SuspendedUntilAssignedThenResumed(t *testing.T) {
	spec := helperSpec(t, "block")
	var log records
	spec.Log = log.logger()
	var checked bool
	l := Local{resume: func(pid int) error {
		// At the resume the child is in its job, has run no code and its
		// one thread is still suspended from its creation.
		h := watch(t, pid)
		assert.True(t, h.alive(t))
		assert.False(t, ran(t, spec), "the child ran code before the resume")
		assert.Equal(t, []uint32{1}, suspendCounts(t, pid), "one thread, suspended once")
		checked = true
		return winjob.ResumeSuspended(pid)
	}}
	s := launch(t, t.Context(), l, spec)
	require.True(t, checked)
	require.Equal(t, "ready", s.line(t))
	assert.True(t, ran(t, spec), "the child runs once resumed")
	require.NotZero(t, s.job())
	assert.True(t, inJob(t, windows.Handle(watch(t, s.pid)), s.job()))
	assert.Empty(t, log.all(t), "a clean start logs nothing")
}

func TestSP5_DescendantsInJobDieWithJobKill(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "spawn-block"))
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	child, grandchild := watch(t, s.pid), watch(t, gpid)
	assert.True(t, inJob(t, windows.Handle(grandchild), s.job()), "the grandchild is in the job")

	s.Kill()
	assert.Equal(t, uint32(killedExitCode), child.awaitDeath(t))
	assert.Equal(t, uint32(killedExitCode), grandchild.awaitDeath(t))
	assert.Equal(t, ExitStatus{Code: killedExitCode, Stopped: true}, s.waitExit(t))
	s.awaitStdoutEOF(t)
}

func TestSP5_KillOnJobCloseEndsDescendants(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "spawn-block"))
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	child, grandchild := watch(t, s.pid), watch(t, gpid)

	// No kill: closing the job's last handle ends every member.
	s.Release()
	child.awaitDeath(t)
	grandchild.awaitDeath(t)
	s.waitExit(t)
	s.awaitStdoutEOF(t)
	s.Release() // idempotent
}

func TestSP5_AssignmentFailureWarnsAndRunsWithoutJob(t *testing.T) {
	// LOG-3: the record, exactly.
	spec := helperSpec(t, "block")
	var log records
	spec.Log = log.logger()
	boom := errors.New("access denied on purpose")
	l := Local{assign: func(windows.Handle, windows.Handle) error { return boom }}
	s := launch(t, t.Context(), l, spec)
	require.Equal(t, "ready", s.line(t), "the child runs without a job")
	assert.Zero(t, s.job())
	assert.Equal(t, []map[string]any{{
		"level": "WARN", "msg": "process group assignment failed",
		"command": exeBase(t), "dir": spec.Dir, "error": boom.Error(),
	}}, log.all(t))

	// Without a job the kill still ends the child itself.
	s.Kill()
	assert.Equal(t, ExitStatus{Code: killedExitCode, Stopped: true}, s.waitExit(t))
}

func TestLOG3_AssignmentRecordAttributes(t *testing.T) {
	// The same record through the real call: assigning to a handle that
	// is not a job fails in the system, not in a fake.
	spec := helperSpec(t, "block")
	var log records
	spec.Log = log.logger()
	l := Local{assign: func(_, process windows.Handle) error {
		return windows.AssignProcessToJobObject(windows.InvalidHandle, process)
	}}
	s := launch(t, t.Context(), l, spec)
	require.Equal(t, "ready", s.line(t))
	recs := log.all(t)
	require.Len(t, recs, 1)
	assert.Equal(t, "WARN", recs[0]["level"])
	assert.Equal(t, LogAssignFailed, recs[0]["msg"])
	assert.Equal(t, exeBase(t), recs[0]["command"])
	assert.Equal(t, spec.Dir, recs[0]["dir"])
	assert.NotEmpty(t, recs[0]["error"])
}

func TestSP6_ResumeFailureWarnsTerminatesAndIsPortExit(t *testing.T) {
	// LOG-4 and the outcome: port_exit, the child ended and reaped.
	spec := helperSpec(t, "block")
	var log records
	spec.Log = log.logger()
	boom := errors.New("resume refused on purpose")
	var child watched
	l := Local{resume: func(pid int) error {
		child = watch(t, pid)
		return boom
	}}
	_, err := launchRetryingWine(t, t.Context(), l, spec)
	f := requireFault(t, err, contract.KindPortExit, MsgStart)
	assert.ErrorIs(t, f, boom)
	assert.Equal(t, []map[string]any{{
		"level": "WARN", "msg": "process resume failed",
		"command": exeBase(t), "dir": spec.Dir, "error": boom.Error(),
	}}, log.all(t))
	require.NotZero(t, child)
	assert.False(t, child.alive(t), "terminated and reaped before Launch returned")
	assert.Equal(t, uint32(killedExitCode), child.awaitDeath(t))
	assert.False(t, ran(t, spec), "it never ran")
}

func TestLOG4_ResumeRecordThroughTheRealCall(t *testing.T) {
	// Resuming a thread that does not exist fails in the system.
	spec := helperSpec(t, "block")
	var log records
	spec.Log = log.logger()
	l := Local{resume: func(int) error { return winjob.ResumeSuspended(0x7ffffff0) }}
	_, err := launchRetryingWine(t, t.Context(), l, spec)
	f := requireFault(t, err, contract.KindPortExit, MsgStart)
	assert.ErrorIs(t, f, winjob.ErrNoThread)
	recs := log.all(t)
	require.Len(t, recs, 1)
	assert.Equal(t, "WARN", recs[0]["level"])
	assert.Equal(t, LogResumeFailed, recs[0]["msg"])
	assert.Equal(t, exeBase(t), recs[0]["command"])
	assert.Equal(t, spec.Dir, recs[0]["dir"])
	assert.Equal(t, winjob.ErrNoThread.Error(), recs[0]["error"])
}

// expiring is a context whose deadline passes when the test says so: the
// moment a real deadline would pass is not something a test can place
// between two system calls.
type expiring struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newExpiring(parent context.Context) *expiring {
	return &expiring{Context: parent, done: make(chan struct{})}
}

func (e *expiring) expire()                     { e.once.Do(func() { close(e.done) }) }
func (e *expiring) Done() <-chan struct{}       { return e.done }
func (e *expiring) Deadline() (time.Time, bool) { return time.Now(), true }
func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestSP7_ContextDoneBeforeResumeNeverResumes(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{{"cancel", context.Canceled}, {"deadline", context.DeadlineExceeded}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := helperSpec(t, "block")
			var log records
			spec.Log = log.logger()
			var ctx context.Context
			var end func()
			if tc.want == context.Canceled {
				c, cancel := context.WithCancel(t.Context())
				ctx, end = c, cancel
			} else {
				e := newExpiring(t.Context())
				ctx, end = e, e.expire
			}
			var child watched
			resumed := false
			l := Local{
				// The context ends after the start, at the assignment,
				// so the resume is the first step that sees it done.
				assign: func(job, process windows.Handle) error {
					pid, err := windows.GetProcessId(process)
					require.NoError(t, err)
					child = watch(t, int(pid))
					end()
					return windows.AssignProcessToJobObject(job, process)
				},
				resume: func(int) error { resumed = true; return nil },
			}
			_, err := launchRetryingWine(t, ctx, l, spec)
			f := requireFault(t, err, contract.KindTurnCancelled, MsgStartCancelled)
			assert.ErrorIs(t, f, tc.want)
			assert.False(t, resumed, "never resumed")
			assert.Empty(t, log.all(t), "no resume warning")
			require.NotZero(t, child)
			assert.False(t, child.alive(t), "terminated and reaped before Launch returned")
			assert.False(t, ran(t, spec), "terminated before running any code")
		})
	}
}

func TestSP3_ContextEndBreaksThenKillsJob(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	spec := helperSpec(t, "spawn-block")
	spec.Grace = 50 * time.Millisecond
	events := make(chan [2]uint32, 1)
	l := Local{ctrlEvent: func(event, group uint32) error {
		events <- [2]uint32{event, group}
		return nil
	}}
	s := launch(t, ctx, l, spec)
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	grandchild := watch(t, gpid)
	cancel()
	assert.Equal(t, [2]uint32{windows.CTRL_BREAK_EVENT, uint32(s.pid)}, <-events)
	// Wine never delivers the event (see TestTD3_…), so the kill after
	// grace is what ends the job here.
	assert.Equal(t, ExitStatus{Code: killedExitCode, Stopped: true}, s.waitExit(t))
	assert.Equal(t, uint32(killedExitCode), grandchild.awaitDeath(t))
}

// TestTD3_CtrlBreakToTheProcessGroup covers the graceful signal by its
// seam: Wine does not deliver console control events to processes, so what
// can be checked under it is the call itself, CTRL_BREAK_EVENT to the
// process group the child leads (CREATE_NEW_PROCESS_GROUP makes its id the
// child's pid). That the call never waits and its failure is ignored runs
// for real.
func TestTD3_CtrlBreakToTheProcessGroup(t *testing.T) {
	var got [][2]uint32
	l := Local{ctrlEvent: func(event, group uint32) error {
		got = append(got, [2]uint32{event, group})
		return errors.New("no console")
	}}
	s := launch(t, t.Context(), l, helperSpec(t, "block"))
	require.Equal(t, "ready", s.line(t))
	s.Terminate() // a failure is ignored
	assert.Equal(t, [][2]uint32{{windows.CTRL_BREAK_EVENT, uint32(s.pid)}}, got)
}

func TestTD6_JobKillAfterReapReachesDescendantHoldingStdout(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "spawn-exit"))
	gpid, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	grandchild := watch(t, gpid)
	assert.Equal(t, ExitStatus{Code: 0}, s.waitExit(t))
	assert.True(t, grandchild.alive(t), "the runtime is reaped, its descendant lives on")

	s.Kill()
	assert.Equal(t, uint32(killedExitCode), grandchild.awaitDeath(t))
	s.awaitStdoutEOF(t)
}

func TestTD12_NoDescendantLeavesTheJob(t *testing.T) {
	// On Windows there is no way out of the group: breakaway is refused
	// and a new process group stays in the job, so the kill reaches it.
	s := launch(t, t.Context(), Local{}, helperSpec(t, "spawn-breakaway"))
	line := s.line(t)
	require.NotEqual(t, "escaped", line)
	gpid, err := strconv.Atoi(line)
	require.NoError(t, err)
	grandchild := watch(t, gpid)
	assert.True(t, inJob(t, windows.Handle(grandchild), s.job()))
	s.waitExit(t)

	s.Kill()
	assert.Equal(t, uint32(killedExitCode), grandchild.awaitDeath(t))
}

func TestTD9_StderrFinishBoundedWhileDescendantHoldsIt(t *testing.T) {
	// The collector's finish sets a read deadline on the stderr read end;
	// the overlapped pipe makes that work on Windows, where os.Pipe has
	// none.
	s := launch(t, t.Context(), Local{}, helperSpec(t, "spawn-exit"))
	_, err := strconv.Atoi(s.line(t))
	require.NoError(t, err)
	c := stderrlog.Start(s.Stderr(), nil, nil)
	s.waitExit(t)
	ctx, cancel := context.WithTimeout(t.Context(), ioBound)
	defer cancel()
	require.NoError(t, c.Finish(ctx), "finish ends the read while the descendant holds stderr")
	assert.ErrorIs(t, c.Err(), os.ErrDeadlineExceeded)

	// And closing a read end releases a blocked read.
	read := make(chan error, 1)
	go func() {
		_, err := s.out.ReadByte()
		read <- err
	}()
	require.NoError(t, s.Stdout().Close())
	select {
	case err := <-read:
		assert.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(ioBound):
		t.Fatal("close did not release the read")
	}
}

func TestSP1_FullEnvironmentWithOverrides(t *testing.T) {
	t.Setenv("FOO", "parent")
	t.Setenv("BAR", "inherited")
	spec := helperSpec(t, "env", "FOO=override")
	s := launch(t, t.Context(), Local{}, spec)
	assert.Equal(t, "FOO=override", s.line(t))
	assert.Equal(t, "BAR=inherited", s.line(t))
	assert.Equal(t, "WD="+spec.Dir, s.line(t), "LT-5: the workspace is the working directory")
	assert.Equal(t, ExitStatus{Code: 0}, s.waitExit(t))
}

func TestSP2_ReapLeavesReadEndsOpen(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "exit7"))
	assert.Equal(t, ExitStatus{Code: 7}, s.waitExit(t))
	assert.Equal(t, "exit status 7", s.Status().String())
	require.NoError(t, s.Stderr().(*os.File).SetReadDeadline(time.Now().Add(ioBound)))
	b, err := io.ReadAll(s.Stderr())
	require.NoError(t, err)
	assert.Equal(t, "failing on purpose\n", string(b))
}

func TestSP4_PipeFailuresArePortExit(t *testing.T) {
	for i, msg := range []string{MsgStdinPipe, MsgStdoutPipe, MsgStderrPipe} {
		t.Run(msg, func(t *testing.T) {
			boom := errors.New("no more pipes")
			var made []*os.File
			l := Local{pipe: func(parentReads bool) (*os.File, *os.File, error) {
				if len(made) == 2*i {
					return nil, nil, boom
				}
				p, c, err := overlappedPipe(parentReads)
				made = append(made, p, c)
				return p, c, err
			}}
			_, err := l.Launch(t.Context(), helperSpec(t, "block"))
			f := requireFault(t, err, contract.KindPortExit, msg)
			assert.ErrorIs(t, f, boom)
			for _, f := range made {
				assert.ErrorIs(t, f.Close(), os.ErrClosed, "pipes made before the failure are closed")
			}
		})
	}
}

func TestSP4_StartFailureIsPortExit(t *testing.T) {
	dir := wintest.TempDir(t)
	notExec := filepath.Join(dir, "agent.exe")
	require.NoError(t, os.WriteFile(notExec, []byte("data"), 0o644))
	_, err := Local{}.Launch(t.Context(), Spec{Program: notExec, Dir: dir})
	requireFault(t, err, contract.KindPortExit, MsgStart)
}

func TestSP3_ContextDoneBeforeStartRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Local{}.Launch(ctx, helperSpec(t, "block"))
	f := requireFault(t, err, contract.KindPortExit, MsgStart)
	assert.ErrorIs(t, f, context.Canceled)
}

func TestSP9_PIDIsDecimalString(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "pid"))
	assert.Equal(t, s.line(t), s.PID())
	s.waitExit(t)
}

func TestTD4_CloseStdinEndsAReadingRuntime(t *testing.T) {
	s := launch(t, t.Context(), Local{}, helperSpec(t, "echo"))
	_, err := io.WriteString(s.Stdin(), "hi\n")
	require.NoError(t, err)
	require.Equal(t, "echo hi", s.line(t))
	s.CloseStdin()
	assert.Equal(t, ExitStatus{Code: 3}, s.waitExit(t))
	s.CloseStdin() // idempotent
}

func TestTD6_KillRacingReleaseNeverUsesAClosedJob(t *testing.T) {
	// The SP-3 binding's kill, a teardown's kill and the release may meet;
	// the group's lock keeps a kill from reaching a closed (and possibly
	// reused) handle. Without -race under Wine, many rounds show that
	// every order ends the child and returns.
	for range 10 {
		ctx, cancel := context.WithCancel(t.Context())
		spec := helperSpec(t, "spawn-block")
		spec.Grace = time.Millisecond
		s := launch(t, ctx, Local{ctrlEvent: func(uint32, uint32) error { return nil }}, spec)
		gpid, err := strconv.Atoi(s.line(t))
		require.NoError(t, err)
		grandchild := watch(t, gpid)
		var wg sync.WaitGroup
		wg.Go(cancel)
		wg.Go(s.Kill)
		wg.Go(s.Release)
		wg.Wait()
		s.waitExit(t)
		grandchild.awaitDeath(t)
		assert.Zero(t, s.job())
	}
}
