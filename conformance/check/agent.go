package check

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// What agent checks need beyond a launched agent. They nest: a session
// needs the handshake, a turn needs a session.
const (
	// NeedHandshake: initialize answered (not refused for want of a
	// credential).
	NeedHandshake Need = "handshake"
	// NeedSession: session/new answered, after authenticate when
	// --auth-method asked for it.
	NeedSession Need = "session"
	// NeedModel: a prompt turn answered by a working model.
	NeedModel Need = "model"
)

// The needs of agent checks, from the least to the most.
var (
	needsHandshake = []Need{NeedHandshake}
	needsSession   = []Need{NeedHandshake, NeedSession}
	needsTurn      = []Need{NeedHandshake, NeedSession, NeedModel}
)

// Config says what agent to grade and how patiently.
type Config struct {
	// Target is the agent command, which each check launches afresh, or
	// the URL of an agent served over the network, which each check dials
	// afresh (a new connection, a new agent) — but for the checks
	// ShareProcess shares a process or connection between.
	Target Target
	// AuthMethod, when set, is the auth method id acpcheck authenticates
	// with (the authenticate request) before the first session/new of
	// every agent process.
	AuthMethod string
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
	// ShareProcess runs the checks that need the handshake or a session
	// but nothing of the process's own (no Wire needs) on one launched,
	// initialized agent process, shared by consecutive such checks, each
	// creating its own sessions: an agent slow to start is graded in far
	// fewer launches.
	// A check that does not pass there is graded again on a fresh launch,
	// whose result is reported, so sharing never changes a verdict.
	ShareProcess bool
}

// checkBudget bounds one agent check as a whole: several response waits
// and an exit wait, so a check that forgets a bound still ends.
func checkBudget(cfg Config) time.Duration {
	return 10*cfg.Timeout + 2*cfg.ExitBound
}

// Run grades the agent with every check of r (or those in cfg.Only), in
// order, each against its own process, and returns one result per check.
// It returns an error only when the agent cannot be launched at all.
func Run(ctx context.Context, r *Registry[*Session], cfg Config) ([]Result, error) {
	rep, err := Grade(ctx, r, cfg)
	return rep.Results, err
}

// Grade is Run that returns the whole report: the verdict, the agent
// graded (as its initialize answer named it) and the coverage of the
// mandatory checks. The report's Command is cfg.Target.Argv, or its URL.
//
// What the agent advertises is learned from the first answers and assumed
// to hold for every launch of the same command: a capability check whose
// capability is known not to be advertised is skipped without launching
// the agent.
func Grade(ctx context.Context, r *Registry[*Session], cfg Config) (Report, error) {
	known := &advertised{gates: map[string]bool{}}
	open, unmet := Launch, func(WireNeeds) string { return "" }
	if url := cfg.Target.URL; url != "" {
		open, unmet = Dial, func(n WireNeeds) string { return n.unmet(url) }
	}
	fresh := func() (*Session, error) {
		s, err := open(cfg.Target, cfg.Timeout, cfg.ExitBound)
		if err != nil {
			return nil, err
		}
		s.authMethod, s.advertised = cfg.AuthMethod, known
		return s, nil
	}
	pool := &sharedProcess{open: fresh}
	defer pool.close()
	lastSharer := lastShareable(r, cfg.Only)
	launch := func(ctx context.Context) (*Session, error) {
		req := requested(ctx)
		i := r.index(req.id)
		if i < 0 || !cfg.ShareProcess || req.fresh {
			return fresh()
		}
		switch c := r.checks[i]; {
		case shareable(c):
			return pool.lease(req.id)
		case c.Wire&EndsProcess != 0 && i > lastSharer:
			if s := pool.handOver(req.id); s != nil {
				return s, nil
			}
		}
		return fresh()
	}
	rep, err := GradeWith(ctx, r, launch, Options{
		Only:            cfg.Only,
		Budget:          checkBudget(cfg),
		Logger:          cfg.Logger,
		Progress:        cfg.Progress,
		KeepTranscripts: cfg.KeepTranscripts,
		Secrets:         cfg.Target.Secrets,
		Advertised:      known.lookup,
		Unmet:           unmet,
	})
	rep.Command = cfg.Target.Argv
	if cfg.Target.URL != "" {
		rep.Command = []string{cfg.Target.URL}
	}
	rep.Advertised = known.report()
	return rep, err
}

// shareable reports whether c can run on a process shared with other
// checks: it needs at least the handshake and nothing of the process's own
// (no Wire needs but raw lines, which reach a launched process as written,
// shared or not). A check that grades the initialize answer is graded on
// the shared process's answer to the same request (Session.Initialize);
// one that initializes its own way declares NeedsOwnHandshake.
func shareable(c Check[*Session]) bool {
	return slices.Contains(c.Needs, NeedHandshake) && c.Wire&^NeedsRawLines == 0
}

// lastShareable is the registry index of the last shareable check a
// grading of only (all when empty) runs, -1 when none: after it, a check
// that ends the process may take the shared one (EndsProcess).
func lastShareable(r *Registry[*Session], only []string) int {
	last := -1
	for i, c := range r.Checks() {
		if shareable(c) && (len(only) == 0 || slices.Contains(only, c.ID)) {
			last = i
		}
	}
	return last
}

// sharedProcess is the agent process the shareable checks of one grading
// run on in turn (Config.ShareProcess). Only the grading's goroutine uses
// it.
type sharedProcess struct {
	open func() (*Session, error)
	cur  *Session
}

// lease returns the shared process for check id, launching a new one when
// there is none or the last one was ended.
func (p *sharedProcess) lease(id string) (*Session, error) {
	if p.cur != nil && !p.cur.share.closed && !p.cur.Spoiled() {
		p.cur.lease(id)
		return p.cur, nil
	}
	p.close()
	s, err := p.open()
	if err != nil {
		return nil, err
	}
	s.share = &shared{first: id}
	s.tr.notef("shared process pid %d: launched for %s, kept for the next checks that can share it", s.PID(), id)
	p.cur = s
	return s, nil
}

// handOver gives the shared process, when one is running, to check id,
// which ends it (EndsProcess): no later check gets it. nil when there is
// none to give.
func (p *sharedProcess) handOver(id string) *Session {
	s := p.cur
	if s == nil || s.share.closed || s.Spoiled() {
		return nil
	}
	p.cur = nil
	s.lease(id)
	s.Discard() // its Close ends it, whatever the check left
	return s
}

// close ends the shared process, if any.
func (p *sharedProcess) close() {
	if p.cur != nil {
		p.cur.Discard()
		p.cur.Close()
		p.cur = nil
	}
}

// advertised is what the agent was seen to advertise, by gate name,
// shared by the sessions of one grading.
type advertised struct {
	mu          sync.Mutex
	gates       map[string]bool
	authMethods []string
	sawAuth     bool // authMethods is initialize's answer
}

// learn records gates seen in one answer; the first answer wins.
func (a *advertised) learn(gates map[string]bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for g, v := range gates {
		if _, ok := a.gates[g]; !ok {
			a.gates[g] = v
		}
	}
}

// learnAuth records the auth methods of the first initialize answer.
func (a *advertised) learnAuth(methods []string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sawAuth {
		a.authMethods, a.sawAuth = methods, true
	}
}

// report is what was learned, for Report.Advertised.
func (a *advertised) report() Advertised {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := Advertised{AuthMethods: slices.Clone(a.authMethods)}
	if len(a.gates) > 0 {
		out.Gates = maps.Clone(a.gates)
	}
	return out
}

func (a *advertised) lookup(gate string) (adv, known bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	adv, known = a.gates[gate]
	return adv, known
}
