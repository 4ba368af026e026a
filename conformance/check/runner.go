package check

import (
	"context"
	"log/slog"
	"time"
)

// Config says what to grade and how patiently.
type Config struct {
	// Target is the agent command; each check launches it afresh.
	Target Target
	// Timeout bounds each wait for a response.
	Timeout time.Duration
	// ExitBound bounds each wait for the process to exit.
	ExitBound time.Duration
	// Only, when non-empty, limits the run to these check IDs.
	Only []string
	// Logger receives one record per check; nil discards.
	Logger *slog.Logger
}

// Run grades the agent with every check of r (or those in cfg.Only), in
// order, each against its own process, and returns one result per check.
// It returns an error only when the agent cannot be launched at all.
func Run(ctx context.Context, r *Registry, cfg Config) ([]Result, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	only := map[string]bool{}
	for _, id := range cfg.Only {
		only[id] = true
	}
	var results []Result
	for _, c := range r.Checks() {
		if len(only) > 0 && !only[c.ID] {
			continue
		}
		res, err := runOne(ctx, c, cfg)
		if err != nil {
			return results, err
		}
		logger.Info("check finished", "id", c.ID, "status", res.Status, "reason", res.Reason, "duration", res.Duration)
		results = append(results, res)
	}
	return results, nil
}

// checkBudget bounds one check as a whole: a few response waits and an
// exit wait, so a check that forgets a bound still ends.
func checkBudget(cfg Config) time.Duration {
	return 6*cfg.Timeout + 2*cfg.ExitBound
}

func runOne(ctx context.Context, c Check, cfg Config) (Result, error) {
	start := time.Now()
	s, err := Launch(cfg.Target, cfg.Timeout, cfg.ExitBound)
	if err != nil {
		return Result{}, err
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
	if res.Status == StatusFail || res.Status == StatusNeedsModel {
		res.Transcript = s.Transcript()
	}
	return res, nil
}
