package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/cmd/acprun/internal/transcript"
	"acpkit.dev/internal/cmdline"
)

// Env is everything Main takes from its process, so tests can supply fakes.
type Env struct {
	// Args are the command-line arguments without the program name.
	Args []string
	// Stdin supplies the prompt "-"; nil reads as empty.
	Stdin io.Reader
	// Stdout receives the view or the JSON lines; Stderr usage text,
	// interrupt notes and adapter logs.
	Stdout, Stderr io.Writer
	// Live selects the live view, where agent text streams as it arrives:
	// set it only when Stdout is a terminal.
	Live bool
	// Color allows escape codes in the live view: colour and the progress
	// indicator. Leave it off under TERM=dumb or NO_COLOR.
	Color bool
	// Tick paces the progress indicator of the live view; nil disables it.
	Tick <-chan time.Time
	// Width returns the terminal's width in columns, for wrapping streamed
	// lines under their tag; nil, or 0, leaves lines unwrapped.
	Width func() int
	// OpenTTY opens the controlling terminal, where --permissions ask puts
	// its questions; nil, or an error, means there is none and every
	// question is refused.
	OpenTTY func() (io.ReadWriteCloser, error)
	// Signals delivers os.Interrupt, syscall.SIGTERM and syscall.SIGHUP;
	// nil means none.
	Signals <-chan os.Signal
	// Getwd returns the current directory.
	Getwd func() (string, error)
	// Now reads the clock for durations.
	Now func() time.Time
	// NewRuntime builds the adapter binding.
	NewRuntime func(RuntimeOptions) (Runtime, error)
	// ReferenceAgent returns the path of a binary that runs the reference
	// agent as `PATH refagent` — acprun's own executable; it is called only
	// when --command is absent.
	ReferenceAgent func(ctx context.Context) (string, error)
}

// RuntimeOptions are what the adapter binding is built with.
type RuntimeOptions struct {
	// Logger receives the adapter's log records.
	Logger *slog.Logger
	// Tap receives the sessions' traffic (adapter.WithWireTap).
	Tap func(adapter.WireEvent)
	// PermissionHook decides permission requests (adapter.WithPermissionHook);
	// nil leaves the adapter's own refusal (--permissions refuse).
	PermissionHook adapter.PermissionHook
	// Containment is how the runtimes' descendants are contained (TD-15,
	// adapter.WithContainment).
	Containment adapter.Containment
	// URL, when set, is where the runtime is served: sessions connect to
	// it instead of launching one ([acpkit] adapter.WithDialer).
	URL string
}

// Main runs acprun and returns its exit status.
func Main(env Env) int {
	cfg, err := parseFlags(env.Args, flagInput{stdin: env.Stdin, getwd: env.Getwd})
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		help(env.Stdout)
		return ExitCompleted
	case err == nil && cfg.Version:
		fmt.Fprintln(env.Stdout, versionLine())
		return ExitCompleted
	case err != nil:
		if _, ok := errors.AsType[*UsageError](err); ok {
			return cmdline.Report(env.Stderr, "acprun", usageHead, err)
		}
		fmt.Fprintf(env.Stderr, "acprun: %v\n", err)
		return ExitUsage
	}
	var v view
	logTo := env.Stderr
	switch {
	case cfg.JSON:
		jv := newJSONView(env.Stdout, env.Stderr)
		jv.quietStall = cfg.QuietStall
		v = jv
	case cfg.Final:
		v = newFinalView(env.Stdout, env.Stderr)
	default:
		tv := newTextView(env.Stdout, env.Live, env.Color, env.Tick, env.Now)
		tv.verbose, tv.width = cfg.Verbose, env.Width
		v, logTo = tv, tv.logWriter(env.Stderr)
	}
	defer v.close()
	r := &run{cfg: cfg, env: env, view: v, logTo: logTo}
	if cfg.Record != "" {
		f, err := os.Create(cfg.Record)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acprun: --record: %v\n", err)
			return ExitUsage
		}
		defer f.Close()
		r.rec = transcript.NewRecorder(f)
		defer func() {
			if err := r.rec.Err(); err != nil {
				fmt.Fprintf(env.Stderr, "acprun: --record: %v\n", err)
			}
		}()
	}
	return r.main()
}

// run is one acprun invocation: one session, its turns, its teardown.
type run struct {
	cfg   Config
	env   Env
	view  view
	logTo io.Writer            // where adapter log records go
	tail  stderrTail           // the runtime's stderr, shown when the run fails
	cont  continuation         // what the start tried for --resume
	rec   *transcript.Recorder // --record; nil without

	// hardCtx ends on the second interrupt (or SIGTERM): everything stops
	// at once, including the teardown's graceful window.
	hardCtx  context.Context
	hardStop context.CancelFunc

	mu         sync.Mutex
	interrupts int
	phase      context.CancelFunc // cancels the start or turn in progress
	stopping   bool               // teardown has begun
	rt         Runtime
	sess       *Session // set once StartSession returned

	stopOnce sync.Once
	stopErr  error
	stopTook time.Duration
	bg       sync.WaitGroup // the hard-teardown goroutine

	// forced is set once a person forced the stop (a second interrupt,
	// SIGTERM, SIGHUP).
	forced atomic.Bool
	// askMu puts one --permissions ask question on the terminal at a time.
	askMu sync.Mutex
}

func (r *run) main() int {
	began := r.env.Now()
	r.hardCtx, r.hardStop = context.WithCancel(context.Background())
	defer r.hardStop()

	done := make(chan struct{})
	var watch sync.WaitGroup
	if r.env.Signals != nil {
		watch.Go(func() { r.watchSignals(done) })
	}
	rep := r.session()
	close(done)
	watch.Wait()
	r.bg.Wait()

	rep.TotalTook = r.env.Now().Sub(began)
	r.mu.Lock()
	rep.Interrupts = r.interrupts
	r.mu.Unlock()
	if rep.usage != nil {
		return cmdline.Report(r.env.Stderr, "acprun", usageHead, rep.usage)
	}
	if rep.Status == ExitStartFailed || rep.Status == ExitTurnFailed {
		writeFailureNotes(r.logTo, &r.tail, rep.Command, rep.failure)
	}
	r.view.finish(rep)
	return rep.Status
}

// session runs start, turns and stop, and reports the outcome.
func (r *run) session() runReport {
	rep := runReport{}
	fail := func(err error, status int, reason string) runReport {
		rep.Status, rep.Reason = status, reason
		rep.Kind, rep.Message, rep.failure = adapter.KindOf(err), errText(err), err.Error()
		return rep
	}

	command := r.cfg.Command
	if r.cfg.URL != "" {
		command = r.cfg.URL // nothing runs: it names the runtime in the records
	} else if !r.cfg.CommandGiven {
		path, err := r.env.ReferenceAgent(r.hardCtx)
		if err != nil {
			err = &adapter.Error{Kind: adapter.KindAgentNotFound, Message: "the reference agent is unavailable", Err: err}
			r.view.startupFailed(err)
			if r.interrupted() {
				return fail(err, ExitCancelled, reasonCancelled)
			}
			return fail(err, ExitStartFailed, reasonStartFailed)
		}
		if strings.ContainsFunc(path, unicode.IsSpace) {
			// agent.command is split on whitespace (LT-3).
			err := &adapter.Error{Kind: adapter.KindAgentNotFound, Message: "the reference agent is unavailable",
				Err: fmt.Errorf("its path %q contains whitespace, which agent.command cannot carry", path)}
			r.view.startupFailed(err)
			return fail(err, ExitStartFailed, reasonStartFailed)
		}
		command = path + " " + RefagentSubcommand
	}

	rep.Command = command
	if r.rec != nil {
		r.rec.Start(transcript.Header{Recorder: versionLine(), Command: command, Cwd: r.cfg.Cwd}, r.env.Now())
	}
	tail := newTailHandler(slog.NewTextHandler(r.logTo, &slog.HandlerOptions{Level: r.cfg.LogLevel}), &r.tail, r.cont.logged)
	if !r.cfg.LogLevelGiven {
		// After a stop the person forced, the adapter's reports of it are
		// noise on their terminal; asked for with --log-level, they stay.
		tail.mute = r.forced.Load
	}
	rt, err := r.env.NewRuntime(RuntimeOptions{Logger: slog.New(tail), Tap: r.onWire, PermissionHook: r.permissionHook(), Containment: r.cfg.Containment, URL: r.cfg.URL})
	if err != nil {
		r.view.startupFailed(err)
		return fail(err, ExitStartFailed, reasonStartFailed)
	}

	params := adapter.StartParams{
		WorkspacePath: r.cfg.Cwd,
		Agent: adapter.AgentConfig{
			Kind:          adapter.KindName,
			Command:       command,
			ReadTimeoutMS: millis(r.cfg.ReadTimeout),
			TurnTimeoutMS: millis(r.cfg.TurnTimeout),
			StopGraceMS:   millis(r.cfg.StopGrace),
		},
		AuthMethodID:             r.cfg.AuthMethod,
		ResumeSessionID:          r.cfg.Resume,
		SSHHost:                  r.cfg.SSHHost,
		SSHStrictHostKeyChecking: r.cfg.SSHStrictHostKeyChecking,
		SSHPassEnv:               r.cfg.SSHPassEnv,
		MCPConfigPath:            r.cfg.MCPConfig,
		CredentialVerification:   r.cfg.VerifyCredential,
	}
	where := r.cfg.Cwd
	if r.cfg.SSHHost != "" {
		where = r.cfg.SSHHost + ":" + where // the runtime runs over there
	}
	r.view.startBegin(command, where)
	if r.cfg.URL != "" {
		r.view.served(r.cfg.URL)
	}
	// The runtime stays bound to the start's context for the whole session
	// (SP-3): ending it signals the process group. So it ends only when the
	// start is interrupted, on a hard teardown, or after StopSession.
	startCtx, cancelStart := context.WithCancel(r.hardCtx)
	defer cancelStart()
	r.setPhase(cancelStart)
	t0 := r.env.Now()
	sess, err := rt.StartSession(startCtx, params)
	rep.StartTook = r.env.Now().Sub(t0)
	r.setPhase(nil)
	r.mu.Lock()
	r.rt, r.sess = rt, &sess
	hard := r.hardCtx.Err() != nil
	r.mu.Unlock()
	rep.SessionID, rep.AgentPID = sess.ID, sess.AgentPID
	if hard {
		// A second interrupt during the start: tear down now.
		r.stopAsync()
	}
	if ame, ok := errors.AsType[*adapter.AuthMethodError](err); ok {
		// --auth-method named a method the runtime does not advertise: the
		// command line is wrong (AU-5), which only the runtime could say.
		r.stop(&rep)
		rep.Status, rep.usage = ExitUsage, fmt.Errorf("--auth-method %q: %w", r.cfg.AuthMethod, advertisedOnly(ame))
		return rep
	}
	if err != nil {
		r.view.startupFailed(err)
		r.stop(&rep)
		status, reason := ExitStartFailed, reasonStartFailed
		if r.interrupted() {
			status, reason = ExitCancelled, reasonCancelled
		}
		return fail(err, status, reason)
	}
	r.view.sessionStarted(sess, rep.StartTook)
	if r.cfg.Resume != "" && !r.cfg.VerifyCredential {
		rr := r.cont.report(r.cfg.Resume, sess.ID)
		r.view.resumed(rr)
		if !rr.Continued && r.cfg.ResumePolicy == resumeRequired {
			rep.Status, rep.Reason = ExitStartFailed, reasonResumeNotContinued
			rep.Message = fmt.Sprintf("saved session %s was not continued (--resume-policy required): %s", rr.Requested, rr.Reason)
			rep.Skipped = len(r.cfg.Prompts)
			r.stop(&rep)
			return rep
		}
	}

	rep.Status, rep.Reason = ExitCompleted, reasonCompleted
	for i, prompt := range r.cfg.Prompts {
		if r.interrupted() {
			rep.Skipped = len(r.cfg.Prompts) - i
			rep.Status, rep.Reason = ExitCancelled, reasonCancelled
			rep.Kind, rep.Message = adapter.KindTurnCancelled, "interrupted before the turn started"
			break
		}
		t := r.turn(sess, i+1, prompt)
		rep.Turns = append(rep.Turns, t)
		if t.Outcome == adapter.EventTurnCompleted && t.Kind == "" {
			continue
		}
		rep.Status, rep.Reason = statusOf(t)
		if r.interrupted() {
			// However the turn ended (a hard teardown ends it as a lost
			// connection), a person stopped it.
			rep.Status, rep.Reason = ExitCancelled, reasonCancelled
		}
		rep.Kind, rep.Message, rep.Detail, rep.failure = t.Kind, t.Message, t.Detail, t.failure
		rep.Skipped = len(r.cfg.Prompts) - i - 1
		break
	}
	r.stop(&rep)
	return rep
}

// onWire receives the adapter's wire tap.
func (r *run) onWire(e adapter.WireEvent) {
	if r.rec != nil {
		r.rec.Tap(e)
	}
	r.cont.observe(e)
	r.view.wire(e)
}

// turn runs one prompt.
func (r *run) turn(sess Session, n int, prompt string) turnReport {
	r.view.turnBegin(n, len(r.cfg.Prompts), prompt)
	ctx, cancel := context.WithCancel(r.hardCtx)
	defer cancel()
	if r.cfg.TurnTimeout > 0 {
		// The orchestrator, not the adapter, bounds a turn (CFG-4): the
		// deadline cancels the turn through the protocol like an interrupt.
		ctx, cancel = context.WithTimeout(ctx, r.cfg.TurnTimeout)
		defer cancel()
	}
	r.setPhase(cancel)
	t0 := r.env.Now()
	res, err := r.rt.RunTurn(ctx, sess, adapter.TurnParams{Prompt: prompt, OnEvent: r.view.event})
	took := r.env.Now().Sub(t0)
	r.setPhase(nil)

	t := turnReport{N: n, Outcome: res.Outcome, Kind: res.Kind, Message: res.Message, Took: took, Result: res}
	if err != nil {
		if t.Kind == "" {
			t.Kind = adapter.KindOf(err)
		}
		if t.Message == "" {
			t.Message = errText(err)
		}
		if d := errText(err); d != t.Message {
			t.Detail = d
		}
		t.failure = err.Error()
		if t.Outcome == "" || t.Outcome == adapter.EventTurnCompleted {
			// An error without a terminal outcome (e.g. a refused turn
			// start) is still a failed turn.
			t.Outcome = adapter.EventTurnFailed
		}
		if t.Kind == "" {
			t.Kind = adapter.KindTurnFailed
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !r.interrupted() {
		// The turn bound elapsed: report it as the orchestrator would.
		t.Outcome, t.Kind = adapter.EventTurnFailed, adapter.KindTurnTimeout
		t.Message = fmt.Sprintf("turn timed out after %s", r.cfg.TurnTimeout)
	}
	r.view.turnEnd(t)
	return t
}

// stop runs StopSession exactly once and records its duration.
func (r *run) stop(rep *runReport) {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.view.stopBegin()
	r.doStop()
	rep.StopTook, rep.StopErr = r.stopTook, r.stopErr
}

func (r *run) doStop() {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		rt, sess := r.rt, r.sess
		r.mu.Unlock()
		if rt == nil || sess == nil {
			return
		}
		t0 := r.env.Now()
		// hardCtx is the teardown's context: the second interrupt ends the
		// graceful window at once (TD-5 then force-kills the group).
		r.stopErr = rt.StopSession(r.hardCtx, *sess)
		r.stopTook = r.env.Now().Sub(t0)
	})
}

// stopAsync starts the teardown from the signal watcher; it runs beside a
// turn still in flight, whose wait it ends by ending the runtime.
func (r *run) stopAsync() {
	r.bg.Go(r.doStop)
}

// setPhase records the cancel function of the start or turn in progress.
func (r *run) setPhase(cancel context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase = cancel
	if cancel != nil && r.interrupts > 0 {
		// An interrupt arrived before this phase began.
		cancel()
	}
}

func (r *run) interrupted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.interrupts > 0
}

// watchSignals applies the interrupt policy until done closes: the first
// interrupt cancels the start or turn in progress (the adapter sends
// session/cancel) and lets teardown run gracefully; the second, a SIGTERM
// or a SIGHUP (the terminal went away) tears everything down at once.
func (r *run) watchSignals(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case sig := <-r.env.Signals:
			r.mu.Lock()
			r.interrupts++
			hard := r.interrupts > 1 || sig == syscall.SIGTERM || sig == syscall.SIGHUP || r.stopping
			phase := r.phase
			started := r.sess != nil
			r.mu.Unlock()
			if !hard {
				r.view.interrupted(false)
				if phase != nil {
					phase()
				}
				continue
			}
			r.forced.Store(true)
			r.view.interrupted(true)
			r.hardStop()
			if started {
				r.stopAsync()
			}
		}
	}
}

// advertisedOnly says which auth methods the runtime does advertise.
func advertisedOnly(e *adapter.AuthMethodError) error {
	if len(e.Advertised) == 0 {
		return errors.New("the runtime advertises no auth method")
	}
	return fmt.Errorf("the runtime advertises %s", strings.Join(e.Advertised, ", "))
}

// versionLine is what --version prints.
func versionLine() string { return cmdline.Version("acprun") }
