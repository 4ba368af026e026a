package check

import (
	"context"
	"log/slog"
	"time"
)

// Config says what to grade and how patiently.
type Config struct {
	// Target is the agent command, which each check launches afresh, or
	// the URL of an agent served over the network, which each check dials
	// afresh (a new connection, a new agent).
	Target Target
	// Timeout bounds each wait for a response.
	Timeout time.Duration
	// ExitBound bounds each wait for the process to exit.
	ExitBound time.Duration
	// Only, when non-empty, limits the run to these check IDs.
	Only []string
	// Logger receives one record per check; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called as each check begins.
	Progress func(Progress)
	// KeepTranscripts keeps every check's wire transcript, not only those
	// of the checks that did not pass.
	KeepTranscripts bool
}

// Progress says which check is running.
type Progress struct {
	// N is the check's 1-based position among Total.
	N, Total int
	// ID is the check's ID.
	ID string
}

// Run grades the agent with every check of r (or those in cfg.Only), in
// order, each against its own process, and returns one result per check.
// It returns an error only when the agent cannot be launched at all.
func Run(ctx context.Context, r *Registry, cfg Config) ([]Result, error) {
	rep, err := Grade(ctx, r, cfg)
	return rep.Results, err
}

// Grade is Run that also reports the agent graded, as its initialize
// answer named it. The Report's Command is cfg.Target.Argv, or its URL.
func Grade(ctx context.Context, r *Registry, cfg Config) (Report, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	only := map[string]bool{}
	for _, id := range cfg.Only {
		only[id] = true
	}
	var checks []Check
	for _, c := range r.Checks() {
		if len(only) == 0 || only[c.ID] {
			checks = append(checks, c)
		}
	}
	rep := Report{Command: cfg.Target.Argv}
	if cfg.Target.URL != "" {
		rep.Command = []string{cfg.Target.URL}
	}
	var credential *Result // the first check that met the credential refusal
	for i, c := range checks {
		if cfg.Progress != nil {
			cfg.Progress(Progress{N: i + 1, Total: len(checks), ID: c.ID})
		}
		res, agent, err := runOne(ctx, c, cfg)
		if err != nil {
			rep.finish()
			return rep, err
		}
		if rep.Agent.Name == "" {
			rep.Agent = agent
		}
		if res.Status == StatusNeedsCredential {
			if credential != nil {
				// One logged-out agent, reported once: the checks after
				// the first skip with its reason.
				res.Status = StatusSkip
				res.Reason = "needs a credential (see " + credential.ID + ")"
				if !cfg.KeepTranscripts {
					res.Transcript = nil
				}
			} else {
				credential = &res
			}
		}
		logger.Info("check finished", "id", c.ID, "status", res.Status, "reason", res.Reason, "duration", res.Duration)
		rep.Results = append(rep.Results, res)
	}
	rep.finish()
	return rep, nil
}

// checkBudget bounds one check as a whole: a few response waits and an
// exit wait, so a check that forgets a bound still ends.
func checkBudget(cfg Config) time.Duration {
	return 6*cfg.Timeout + 2*cfg.ExitBound
}

func runOne(ctx context.Context, c Check, cfg Config) (Result, Agent, error) {
	start := time.Now()
	if cfg.Target.URL != "" {
		if why := c.Needs.unmet(cfg.Target.URL); why != "" {
			return Result{ID: c.ID, Tier: c.Tier, Title: c.Title, Status: StatusSkip, Reason: why}, Agent{}, nil
		}
	}
	open := Launch
	if cfg.Target.URL != "" {
		open = Dial
	}
	s, err := open(cfg.Target, cfg.Timeout, cfg.ExitBound)
	if err != nil {
		return Result{}, Agent{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, checkBudget(cfg))
	// Waits honour cctx; a write to an agent that stopped reading does not,
	// so when the budget runs out the agent's stdin is closed under it.
	stop := context.AfterFunc(cctx, func() {
		s.Notef("check stopped: %v", cctx.Err())
		s.CloseStdin()
	})
	err = c.Run(cctx, s)
	stop()
	cancel()
	s.Close()
	res := Result{ID: c.ID, Tier: c.Tier, Title: c.Title, Status: StatusPass, Duration: time.Since(start)}
	if err != nil {
		if o, ok := asOutcome(err); ok {
			res.Status, res.Reason = o.status, o.reason
		} else {
			res.Status, res.Reason = StatusFail, err.Error()
		}
	}
	if cfg.KeepTranscripts || res.Status == StatusFail || res.Status == StatusNeedsModel || res.Status == StatusNeedsCredential {
		res.Transcript = s.Transcript()
	}
	return res, s.agent, nil
}
