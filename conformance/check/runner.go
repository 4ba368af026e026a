package check

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Instance is one launched peer, driven by one check: for an agent, a
// *Session. The runner launches one for every check and owns its
// lifetime; the launcher may hand out a peer shared with other checks
// (Config.ShareProcess), whose Close keeps it for the next one.
type Instance interface {
	// Transcript is what the check saw so far.
	Transcript() []Line
	// Peer names the peer as it named itself, once it has.
	Peer() Peer
	// Interrupt is called when the check's budget runs out: it must unblock
	// whatever the check is waiting on (for an agent, by closing its
	// stdin), and records note in the transcript.
	Interrupt(note string)
	// Close ends the instance: every process reaped, every goroutine done.
	Close()
}

// Launcher starts a fresh instance for one check. An error means the peer
// cannot be launched at all, and ends the grading.
type Launcher[S Instance] func(ctx context.Context) (S, error)

// Options say how GradeWith runs a registry; they hold for every role.
type Options struct {
	// Only, when non-empty, limits the run to these check IDs.
	Only []string
	// Budget bounds one check as a whole, so a check that forgets a bound
	// still ends (zero: no bound beyond ctx).
	Budget time.Duration
	// Logger receives one record per check; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called as each check begins.
	Progress func(Progress)
	// KeepTranscripts keeps every check's wire transcript, not only those
	// of the checks that did not pass.
	KeepTranscripts bool
	// Secrets are values (credentials the user handed the peer) that are
	// masked wherever they occur in reasons and transcripts.
	Secrets []string
	// Advertised, when set, reports whether the peer advertises a check's
	// Gate, as far as earlier checks have learned it (known is false until
	// then). A check whose gate is known not to be advertised is skipped
	// without launching the peer.
	Advertised func(gate string) (advertised, known bool)
	// Unmet, when set, says why the peer cannot be graded by a check with
	// these wire needs (an agent served at a URL has no process), or "":
	// such a check is skipped, saying why, without a launch.
	Unmet func(WireNeeds) string
}

// Progress says which check is running.
type Progress struct {
	// N is the check's 1-based position among Total.
	N, Total int
	// ID is the check's ID.
	ID string
}

// GradeWith grades a peer of r's role with every check of r (or those in
// o.Only), in registration order, each against its own instance from
// launch, and returns the report (its Command and Env are the caller's to
// fill in). A check whose needs an earlier check found unavailable is
// reported with that check's status without launching the peer again. It
// returns an error only when the peer cannot be launched at all.
func GradeWith[S Instance](ctx context.Context, r *Registry[S], launch Launcher[S], o Options) (Report, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	only := map[string]bool{}
	for _, id := range o.Only {
		only[id] = true
	}
	var checks []Check[S]
	for _, c := range r.Checks() {
		if len(only) == 0 || only[c.ID] {
			checks = append(checks, c)
		}
	}
	mask := newMasker(o.Secrets)
	rep := Report{Role: r.Role(), Registered: len(r.checks)}
	unavailable := map[Need]*Result{} // the first check that found each need unavailable
	for i, c := range checks {
		if o.Progress != nil {
			o.Progress(Progress{N: i + 1, Total: len(checks), ID: c.ID})
		}
		res, found, launched := notLaunched(c, r.Role(), unavailable, o), Need(""), false
		if res == nil {
			var peer Peer
			var err error
			res, found, peer, err = runOne(ctx, c, launch, o, mask)
			if err != nil {
				rep.Judge()
				return rep, err
			}
			launched = true
			if rep.Peer.Name == "" {
				rep.Peer = peer
			}
		}
		if launched && found != "" && unavailable[found] == nil {
			unavailable[found] = res
		}
		logger.Info("check finished", "id", c.ID, "status", res.Status, "reason", res.Reason, "duration", res.Duration)
		rep.Results = append(rep.Results, *res)
	}
	rep.Judge()
	return rep, nil
}

// notLaunched returns the result of a check that need not launch the peer
// — a need of it was found unavailable, or its gate is known not to be
// advertised — or nil when it must run.
func notLaunched[S any](c Check[S], role Role, unavailable map[Need]*Result, o Options) *Result {
	base := Result{ID: c.ID, Tier: c.Tier, Title: c.Title, Pins: c.Pins, Gate: c.Gate, NotLaunched: true}
	if o.Unmet != nil {
		if why := o.Unmet(c.Wire); why != "" {
			base.Status, base.Reason, base.Inapplicable = StatusSkip, why, true
			return &base
		}
	}
	if c.Gate != "" && o.Advertised != nil {
		if adv, known := o.Advertised(c.Gate); known && !adv {
			base.Status = StatusSkip
			base.Reason = fmt.Sprintf("%s does not advertise %s (as it answered an earlier check; not launched)", role, c.Gate)
			return &base
		}
	}
	for _, n := range c.Needs {
		if by := unavailable[n]; by != nil {
			base.Status = by.Status
			base.Reason = fmt.Sprintf("not launched: %s, as %s found", statusPhrase(by.Status), by.ID)
			return &base
		}
	}
	return nil
}

// statusPhrase is how reports say a status in words.
func statusPhrase(s Status) string {
	switch s {
	case StatusNeedsModel:
		return "needs a working model"
	case StatusNeedsCredential:
		return "needs a credential"
	}
	return string(s)
}

// launchRequest is what GradeWith tells a Launcher, through the context it
// calls it with: the check the instance is for, and whether it must be a
// fresh one (the check is graded again after it did not pass on a shared
// instance).
type launchRequest struct {
	id    string
	fresh bool
}

type launchKey struct{}

// requested is the launchRequest ctx carries (the zero one when none).
func requested(ctx context.Context) launchRequest {
	r, _ := ctx.Value(launchKey{}).(launchRequest)
	return r
}

// sharedInstance is implemented by instances that may run on a peer other
// checks share (Config.ShareProcess). Sharing must never change a verdict:
// when a check on a shared peer does not pass, or the peer cannot serve
// another check, the runner ends the shared peer and grades the check
// again on a fresh instance, whose result is the one reported — unless the
// check sent the peer nothing (a skip decided by the handshake's answer),
// or ends the peer by design (EndsProcess) and passed (sharedRunStands).
type sharedInstance interface {
	// Shared reports whether the instance runs on a shared peer.
	Shared() bool
	// Spoiled reports whether the shared peer can serve no further check:
	// it exited, its output ended or the check was interrupted.
	Spoiled() bool
	// Discard makes Close end the shared peer instead of keeping it for
	// the next check.
	Discard()
	// Untouched reports whether the check sent the shared peer nothing:
	// its outcome rests on the shared handshake alone — the answer to the
	// initialize a fresh launch would send — so grading it again on a
	// fresh launch would end the same way.
	Untouched() bool
}

// runOne launches an instance and runs c against it. It returns the
// result, the need the check found unavailable (if any), and the peer as
// it named itself.
func runOne[S Instance](ctx context.Context, c Check[S], launch Launcher[S], o Options, mask *masker) (*Result, Need, Peer, error) {
	start := time.Now()
	s, err := launch(context.WithValue(ctx, launchKey{}, launchRequest{id: c.ID}))
	if err != nil {
		return nil, "", Peer{}, err
	}
	err = runOn(ctx, c, s, o)
	regraded := ""
	if sh, ok := any(s).(sharedInstance); ok && sh.Shared() && !sharedRunStands(c, sh, err) {
		regraded = "on the shared process it ended " + endedAs(err, sh.Spoiled())
		sh.Discard()
		s.Close()
		s, err = launch(context.WithValue(ctx, launchKey{}, launchRequest{id: c.ID, fresh: true}))
		if err != nil {
			return nil, "", Peer{}, err
		}
		err = runOn(ctx, c, s, o)
	}
	s.Close()
	res := &Result{ID: c.ID, Tier: c.Tier, Title: c.Title, Pins: c.Pins, Gate: c.Gate, Status: StatusPass, Duration: time.Since(start)}
	var found Need
	if err != nil {
		if out, ok := asOutcome(err); ok {
			res.Status, res.Reason, found = out.status, out.reason, out.need
		} else {
			res.Status, res.Reason = StatusFail, err.Error()
		}
	}
	res.Reason = mask.text(res.Reason)
	res.Regraded = mask.text(regraded)
	if o.KeepTranscripts || res.Status != StatusPass && res.Status != StatusSkip {
		res.Transcript = mask.lines(s.Transcript())
		if regraded != "" {
			note := Line{Dir: DirNote, Text: res.Regraded + "; graded again on this fresh launch"}
			res.Transcript = append([]Line{note}, res.Transcript...)
		}
		if rec, ok := any(s).(recorded); ok {
			res.recording = rec.Recording()
		}
	}
	return res, found, s.Peer(), nil
}

// sharedRunStands reports whether the outcome err of c on a shared peer
// is the one reported, without grading c again on a fresh instance. A
// check that ends the peer (EndsProcess) stands when it passed: its pass
// is the peer ending. Any other stands when the peer can serve the next
// check and c passed, or sent the peer nothing (Untouched).
func sharedRunStands[S any](c Check[S], sh sharedInstance, err error) bool {
	if c.Wire&EndsProcess != 0 {
		return err == nil
	}
	return !sh.Spoiled() && (err == nil || sh.Untouched())
}

// runOn runs c against s within the check's budget; when the budget runs
// out, s is interrupted.
func runOn[S Instance](ctx context.Context, c Check[S], s S, o Options) error {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if o.Budget > 0 {
		cctx, cancel = context.WithTimeout(ctx, o.Budget)
	}
	defer cancel()
	stop := context.AfterFunc(cctx, func() {
		s.Interrupt(fmt.Sprintf("check stopped: %v", cctx.Err()))
	})
	defer stop()
	return c.Run(cctx, s)
}

// endedAs says briefly how a check on a shared peer ended, for the note
// that it was graded again.
func endedAs(err error, spoiled bool) string {
	switch out, ok := asOutcome(err); {
	case ok:
		return fmt.Sprintf("%s (%s)", out.status, out.reason)
	case err != nil:
		return fmt.Sprintf("%s (%v)", StatusFail, err)
	case spoiled:
		return "passing, but the process cannot serve another check (it exited, its stdout ended, or the check was interrupted)"
	}
	return string(StatusPass)
}
