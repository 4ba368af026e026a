package check

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Instance is one launched peer, driven by one check: for an agent, a
// *Session. The runner launches a fresh one for every check and owns its
// lifetime.
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

// runOne launches a fresh instance and runs c against it. It returns the
// result, the need the check found unavailable (if any), and the peer as
// it named itself.
func runOne[S Instance](ctx context.Context, c Check[S], launch Launcher[S], o Options, mask *masker) (*Result, Need, Peer, error) {
	start := time.Now()
	s, err := launch(ctx)
	if err != nil {
		return nil, "", Peer{}, err
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if o.Budget > 0 {
		cctx, cancel = context.WithTimeout(ctx, o.Budget)
	}
	stop := context.AfterFunc(cctx, func() {
		s.Interrupt(fmt.Sprintf("check stopped: %v", cctx.Err()))
	})
	err = c.Run(cctx, s)
	stop()
	cancel()
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
	if o.KeepTranscripts || res.Status != StatusPass && res.Status != StatusSkip {
		res.Transcript = mask.lines(s.Transcript())
		if rec, ok := any(s).(recorded); ok {
			res.recording = rec.Recording()
		}
	}
	return res, found, s.Peer(), nil
}
