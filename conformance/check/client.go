package check

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AgentPlaceholder is what acpcheck replaces, in the graded client's
// command line, with the command line that starts its scenario agent.
const AgentPlaceholder = "{agent}"

// ClientConfig says what client to grade and how patiently.
type ClientConfig struct {
	// Argv is the client's command line. Every occurrence of
	// AgentPlaceholder is replaced by the scenario agent's command line
	// (see SubstituteAgent).
	Argv []string
	// AgentProgram is an acpcheck executable: each run links it, beside
	// the grader's socket, under a name that makes it that run's scenario
	// agent (see acpkit.dev/conformance/internal/scenario). acpcheck
	// passes its own.
	AgentProgram string
	// Dir is the client's working directory; empty gives every check a
	// fresh temporary directory, removed after it.
	Dir string
	// Env, when non-nil, replaces the client's inherited environment.
	Env []string
	// Secrets are values of Env to mask in transcripts and reasons.
	Secrets []string
	// Timeout bounds each wait for the client: for a message, for its
	// answer, for it to end its run after the last turn.
	Timeout time.Duration
	// ExitBound bounds each wait for a process to exit.
	ExitBound time.Duration
	// LineBound is the client's own bound on an inbound line; the oversize
	// check sends a line just over it (zero: DefaultClientLineBound).
	LineBound int
	// Only, when non-empty, limits the run to these check IDs.
	Only []string
	// Logger receives one record per check; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called as each check begins.
	Progress func(Progress)
	// KeepTranscripts keeps every check's transcript, not only those of
	// the checks that did not pass.
	KeepTranscripts bool
}

// DefaultClientLineBound is the line bound assumed of a client that names
// none: 10 MiB, acpsdk's default and the adapter's (SP-8).
const DefaultClientLineBound = 10 << 20

// ErrNoPlaceholder is returned when the client's command line does not
// contain AgentPlaceholder: the client would start some other agent.
var ErrNoPlaceholder = errors.New("check: the client command line has no " + AgentPlaceholder + ": put it where the client takes its agent's command")

// SubstituteAgent returns argv with agent, the scenario agent's command
// line, in place of every AgentPlaceholder. The command line is one path
// with no whitespace and no arguments, so it needs no quoting: it is the
// same in a plain argv (`client {agent}`), in a command line the client
// splits on whitespace (`acprun --command "{agent}"`) and in one it parses
// like a shell (`acpx --agent "{agent}"`).
func SubstituteAgent(argv []string, agent string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, AgentPlaceholder, agent)
	}
	return out
}

// clientGrading is what the runs of one client grading share.
type clientGrading struct {
	cfg ClientConfig
	ch  *channel
	// learned is what the client was seen to do or advertise, by gate.
	learned *advertised
}

// GradeClient grades the client cfg describes with every check of r (or
// those in cfg.Only), launching it afresh for each check, and returns the
// report: the verdict, the client as its initialize named itself
// (clientInfo), and the coverage of the mandatory checks.
//
// What the client advertises (its clientCapabilities) and whether it
// cancels a turn when interrupted are learned from the first runs and
// assumed to hold for every later run of the same command.
func GradeClient(ctx context.Context, r *Registry[*ClientRun], cfg ClientConfig) (Report, error) {
	rep := Report{Role: RoleClient, Command: cfg.Argv}
	if !placeholderIn(cfg.Argv) {
		return rep, ErrNoPlaceholder
	}
	if cfg.AgentProgram == "" {
		return rep, errors.New("check: no scenario agent program")
	}
	program, err := filepath.Abs(cfg.AgentProgram)
	if err != nil {
		return rep, fmt.Errorf("check: the scenario agent program: %w", err)
	}
	cfg.AgentProgram = program
	// The client runs in a directory of its own: a relative path to its
	// program means one relative to acpcheck's.
	if p := cfg.Argv[0]; strings.ContainsAny(p, `/\`) && !filepath.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return rep, fmt.Errorf("check: the client program: %w", err)
		}
		cfg.Argv = append([]string{abs}, cfg.Argv[1:]...)
	}
	if cfg.LineBound <= 0 {
		cfg.LineBound = DefaultClientLineBound
	}
	ch, err := openChannel(program)
	if err != nil {
		return rep, err
	}
	defer ch.close()
	g := &clientGrading{cfg: cfg, ch: ch, learned: &advertised{gates: map[string]bool{}}}
	rep, err = GradeWith(ctx, r, g.launch, Options{
		Only:            cfg.Only,
		Budget:          clientBudget(cfg),
		Logger:          cfg.Logger,
		Progress:        cfg.Progress,
		KeepTranscripts: cfg.KeepTranscripts,
		Secrets:         cfg.Secrets,
		Advertised:      g.learned.lookup,
	})
	rep.Command = cfg.Argv
	return rep, err
}

func placeholderIn(argv []string) bool {
	for _, a := range argv {
		if strings.Contains(a, AgentPlaceholder) {
			return true
		}
	}
	return false
}

// clientBudget bounds one client check as a whole: the client's start,
// a few waits for it, its end and its exit.
func clientBudget(cfg ClientConfig) time.Duration {
	return startBound(cfg) + 6*cfg.Timeout + 3*cfg.ExitBound
}

// ClientRun is one run of the graded client, for one check: the client
// process acpcheck launched, the scenario agents it started, and
// everything they saw. A check drives it with Play.
type ClientRun struct {
	g     *clientGrading
	token string
	// marker is unique to the run; the scenario agent's texts carry it, so
	// a check can tell whether the client showed them.
	marker   string
	dir      string
	ownDir   bool
	tr       *transcript
	cmd      *exec.Cmd
	arrivals chan *relayConn

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change below
	conns   []*AgentConn
	exited  bool
	exitErr error
	exitAt  time.Duration
	output  strings.Builder // the client's stdout and stderr, bounded
	// outputOpen counts the client's output pipes not yet read to their end.
	outputOpen int
	peer       Peer
	// leftRunning lists the pids of the scenario agents still running
	// when the client exited.
	leftRunning []string

	reaped  chan struct{}
	helpers sync.WaitGroup
	stop    chan struct{} // closed by Close: the watchers end
	// ctx ends at Close; the scenario agents after the first are served
	// under it.
	ctx    context.Context
	cancel context.CancelFunc
}

// maxClientOutput bounds how much of the client's own output a run keeps
// to look for the scenario's texts in.
const maxClientOutput = 1 << 20

// launch starts the client for one check.
func (g *clientGrading) launch(context.Context) (*ClientRun, error) {
	token, agent, arrivals, err := g.ch.register()
	if err != nil {
		return nil, err
	}
	r := &ClientRun{
		g:        g,
		token:    token,
		marker:   "acpcheck-" + token[:8],
		tr:       newTranscript(newMasker(g.cfg.Secrets)),
		arrivals: arrivals,
		changed:  make(chan struct{}),
		reaped:   make(chan struct{}),
		stop:     make(chan struct{}),
		dir:      g.cfg.Dir,
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if r.dir == "" {
		dir, err := os.MkdirTemp("", "acpcheck-client-")
		if err != nil {
			g.ch.unregister(token)
			return nil, fmt.Errorf("check: a directory for the client: %w", err)
		}
		r.dir, r.ownDir = dir, true
	}
	argv := SubstituteAgent(g.cfg.Argv, agent)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = r.dir, g.cfg.Env
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		r.abandon()
		return nil, fmt.Errorf("check: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(stdin)
		r.abandon()
		return nil, fmt.Errorf("check: stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(stdin, outR, outW)
		r.abandon()
		return nil, fmt.Errorf("check: stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, outW, errW
	isolate(cmd)
	if err := cmd.Start(); err != nil {
		closeAll(stdin, outR, outW, errR, errW)
		r.abandon()
		return nil, fmt.Errorf("check: start the client %q: %w", argv[0], err)
	}
	closeAll(stdin, outW, errW)
	r.cmd = cmd
	r.tr.notef("launched the client, pid %d: %q", cmd.Process.Pid, argv)
	r.helpers.Add(4)
	r.outputOpen = 2
	go r.collect(outR, DirClientStdout)
	go r.collect(errR, DirClientStderr)
	go r.reap()
	go r.takeArrivals()
	return r, nil
}

// abandon undoes a launch that failed before the client started.
func (r *ClientRun) abandon() {
	r.cancel()
	r.g.ch.unregister(r.token)
	if r.ownDir {
		_ = os.RemoveAll(r.dir)
	}
}

// maxOutputLine bounds one line of the client's output as recorded; the
// rest of a longer line is read and dropped, so a client that echoes a
// huge message never blocks on a full pipe.
const maxOutputLine = 64 << 10

// collect records the client's own output, line by line.
func (r *ClientRun) collect(f *os.File, dir Direction) {
	defer r.helpers.Done()
	defer func() {
		r.mu.Lock()
		r.outputOpen--
		r.broadcastLocked()
		r.mu.Unlock()
	}()
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxOutputLine - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			r.tr.add(dir, line)
			r.mu.Lock()
			if r.output.Len() < maxClientOutput {
				r.output.Write(line)
				r.output.WriteByte('\n')
			}
			r.mu.Unlock()
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

func (r *ClientRun) reap() {
	defer r.helpers.Done()
	err := r.cmd.Wait()
	at := time.Since(r.tr.start)
	// Which agents outlived the client is decided now, by asking the
	// system, not by when their connections' ends are read.
	var left []string
	r.mu.Lock()
	conns := append([]*AgentConn(nil), r.conns...)
	r.mu.Unlock()
	for _, c := range conns {
		if gone, _, _ := c.Gone(); !gone && processAlive(c.hello.PID) {
			left = append(left, strconv.Itoa(c.hello.PID))
		}
	}
	if err != nil {
		r.tr.notef("the client exited: %v", err)
	} else {
		r.tr.notef("the client exited: status 0")
	}
	r.mu.Lock()
	r.exited, r.exitErr, r.exitAt, r.leftRunning = true, err, at, left
	r.broadcastLocked()
	r.mu.Unlock()
	close(r.reaped)
}

// takeArrivals adopts every scenario agent the client starts.
func (r *ClientRun) takeArrivals() {
	defer r.helpers.Done()
	for {
		select {
		case <-r.stop:
			return
		case rc := <-r.arrivals:
			r.adopt(rc)
		}
	}
}

func (r *ClientRun) broadcastLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// wait blocks until cond (evaluated with r.mu held) holds, ctx ends or d
// passes; it reports whether cond held.
func (r *ClientRun) wait(ctx context.Context, d time.Duration, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		r.mu.Lock()
		ok, changed := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Transcript is what the run has seen so far.
func (r *ClientRun) Transcript() []Line { return r.tr.snapshot() }

// Peer is the client as its initialize named itself (clientInfo).
func (r *ClientRun) Peer() Peer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peer
}

// Recording names the scenario agent as the client started it (the
// transcript is the client's view of it), or the client when it started
// none.
func (r *ClientRun) Recording() Recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := Recording{Command: strings.Join(r.cmd.Args, " "), Cwd: r.dir, Started: r.tr.start}
	if len(r.conns) > 0 {
		h := r.conns[0].hello
		rec.Command, rec.Cwd = strings.Join(h.Argv, " "), h.Cwd
	}
	return rec
}

// Interrupt notes why the check was stopped and stops the client, which
// ends every wait of the check.
func (r *ClientRun) Interrupt(note string) {
	r.tr.notef("%s", note)
	killGroup(r.cmd.Process.Pid)
}

// Close ends the run: the client's process group is killed and reaped,
// every scenario agent is told to exit and its connection closed, and the
// run's directory removed.
func (r *ClientRun) Close() {
	killGroup(r.cmd.Process.Pid)
	<-r.reaped
	close(r.stop)
	r.cancel()
	r.g.ch.unregister(r.token)
	r.mu.Lock()
	conns := append([]*AgentConn(nil), r.conns...)
	r.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	r.helpers.Wait()
	if r.ownDir {
		_ = os.RemoveAll(r.dir)
	}
}

// Dir is the client's working directory.
func (r *ClientRun) Dir() string { return r.dir }

// Marker is a text unique to this run and label, for the scenario to
// send and a check to look for in the client's output.
func (r *ClientRun) Marker(label string) string { return r.marker + "-" + label }

// ShowedText reports whether the client wrote text to its stdout or
// stderr. Once the client has exited, what it wrote last may still be in
// its pipes: the answer waits for both to be read to their end (at most
// the exit bound, as a process the client left behind may hold them).
func (r *ClientRun) ShowedText(text string) bool {
	r.wait(r.ctx, r.g.cfg.ExitBound, func() bool { return !r.exited || r.outputOpen == 0 })
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.output.String(), text)
}

// ClientExit says whether the client has exited, how, and when.
func (r *ClientRun) ClientExit() (exited bool, code int, at time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exited, exitCode(r.exitErr), r.exitAt
}

// exitCode is a Wait error's exit code: 0 for nil, -1 for a signal or a
// failure to wait.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// InterruptClient interrupts the client as a person would, to make it
// cancel its turn: SIGINT to the client process (Windows: CTRL_BREAK_EVENT
// to its process group, which Go and Node programs see as an interrupt).
func (r *ClientRun) InterruptClient() error {
	r.tr.notef("acpcheck interrupted the client (%s), as a person would to cancel the turn", interruptName)
	return interrupt(r.cmd.Process.Pid)
}
