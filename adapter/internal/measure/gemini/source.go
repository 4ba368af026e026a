// Package gemini is the Gemini CLI measurement source (spec §9): it arms
// Gemini CLI's local telemetry on a launch that names the runtime, and after
// each turn reads the session's token counts back from the telemetry file,
// falling back to the CLI's own session journal.
package gemini

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/measure"
)

// RuntimeName is the agentInfo.name Gemini CLI reports (GEM-1).
const RuntimeName = "gemini-cli"

// Name is the source's registry name.
const Name = "gemini-cli"

// The file bounds of GEM-4 and GEM-8.
const (
	// readBound is what one drain reads past the saved telemetry position
	// (facts of issue #12: bounded, never a skipped file).
	readBound = 64 << 20
	// journalFileBound skips a journal file larger than this (GEM-8).
	journalFileBound = 64 << 20
	// journalLineBound skips a journal line longer than this (GEM-8).
	journalLineBound = 10 << 20
)

// The drain's poll (GEM-7): every 200 ms for up to 6 s, one 5 s batch tick
// of the CLI's exporters plus slack.
const (
	pollEvery = 200 * time.Millisecond
	pollFor   = 6 * time.Second
)

// Source reads one session's usage from Gemini CLI's telemetry outfile and
// journal. Its methods are safe to call from different goroutines; Drain
// calls are serialized.
type Source struct {
	// getenv and userHome locate the journal (GEM-8); tests replace them.
	getenv   func(string) string
	userHome func() (string, error)
	// pollEvery and pollFor are GEM-7's poll; tests shorten them.
	pollEvery, pollFor time.Duration

	mu        sync.Mutex
	dir       string
	env       []string
	closed    bool
	sessionID string
	// pos is the telemetry read position: past fully decoded values only.
	pos int64
	// tel is everything telemetry counted since Open.
	tel tally
	// inherited are the journal ids present at Open (GEM-3).
	inherited map[string]bool
	// acct grades the figures and carries what they left uncovered
	// (GEM-11).
	acct measure.Account
}

var _ measure.Source = (*Source)(nil)

// New returns an unclaimed source.
func New() *Source {
	return &Source{getenv: os.Getenv, userHome: os.UserHomeDir, pollEvery: pollEvery, pollFor: pollFor}
}

// Factory is the registry's constructor for this source.
func Factory() measure.Source { return New() }

// Name identifies the source.
func (s *Source) Name() string { return Name }

// runtime is how the source knows Gemini CLI: its handshake name (GEM-1)
// and Q-2's claim rule as measured on Gemini CLI 0.61.0, a token whose
// base name, less one script or executable suffix, is gemini, or the npm
// package, bare or versioned.
var runtime = measure.Runtime{Name: RuntimeName, Programs: []string{"gemini"}, Packages: []string{"@google/gemini-cli"}}

// Recognize accepts exactly Gemini CLI's handshake name; the version plays
// no part (GEM-1, MS-3).
func (s *Source) Recognize(runtimeName string) bool { return runtime.Recognize(runtimeName) }

// Claim claims a local launch whose command line names Gemini CLI, or
// a relaunch offer for a runtime it recognises (RS-4). A claim creates the
// private directory and arms the telemetry variables (GEM-2).
func (s *Source) Claim(l measure.Launch) (bool, error) {
	if !runtime.Claims(l) {
		return false, nil // MS-2, RS-7, RS-4
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		return true, nil
	}
	dir, err := os.MkdirTemp("", "sortie-usage-")
	if err != nil {
		return false, fmt.Errorf("gemini measurement source: %w", err)
	}
	s.dir = dir
	s.env = []string{
		"GEMINI_TELEMETRY_ENABLED=true",
		"GEMINI_TELEMETRY_TARGET=local",
		"GEMINI_TELEMETRY_OUTFILE=" + s.outfile(),
		// Without it every request record repeats the conversation: the
		// file grows quadratically and holds the prompts on disk.
		"GEMINI_TELEMETRY_LOG_PROMPTS=false",
	}
	return true, nil
}

// Env is the claim's assignments; nil before a claim.
func (s *Source) Env() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.env...)
}

// Dir is the private directory, "" when unclaimed or closed.
func (s *Source) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

func (s *Source) outfile() string { return filepath.Join(s.dir, "telemetry.json") }

// Open starts measuring sessionID (GEM-3): counters reset, the telemetry
// position at the outfile's current size, and the journal's existing
// message ids remembered as inherited.
func (s *Source) Open(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" || s.closed {
		return fmt.Errorf("gemini measurement source: open before a claim")
	}
	s.sessionID = sessionID
	s.tel = tally{}
	s.acct = measure.Account{}
	s.pos = 0
	if fi, err := os.Stat(s.outfile()); err == nil {
		s.pos = fi.Size()
	}
	s.inherited = map[string]bool{}
	for id := range readJournal(s.journalHome(), sessionID, nil).ids {
		s.inherited[id] = true
	}
	return nil
}

// journalHome is GEMINI_CLI_HOME when set, else the user's home (GEM-8).
func (s *Source) journalHome() string {
	if h := s.getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	h, _ := s.userHome()
	return h
}

// Close removes the private directory; idempotent, and safe on a source
// that never claimed (GEM-2, RS-8).
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	dir := s.dir
	s.dir, s.env = "", nil
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("gemini measurement source: %w", err)
	}
	return nil
}

// Drain answers with the run-cumulative figure after a turn whose presence
// signal was lowerBound (GEM-7..GEM-12).
func (s *Source) Drain(ctx context.Context, lowerBound int64) (measure.Figure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" || s.closed || s.sessionID == "" {
		return measure.Figure{}, false
	}
	before := s.tel
	cancelled := measure.Poll(ctx, s.pollEvery, s.pollFor, func() bool {
		s.pos = readTelemetry(s.outfile(), s.pos, s.sessionID, &s.tel)
		// Without a bound there is nothing to wait for: what arrived is
		// the figure.
		return s.acct.Covers(s.tel.count(), lowerBound) || (lowerBound <= 0 && s.tel.records > before.records)
	})
	if cancelled {
		s.acct.Nothing(lowerBound)
		return measure.Figure{}, false
	}
	if s.acct.Covers(s.tel.count(), lowerBound) {
		return s.acct.Answer(lowerBound, s.tel.count(), "telemetry"), true
	}
	telSince := s.tel.since(before)
	telMeasured := telSince.records > 0 && (telSince.nonZero() || lowerBound <= 0)
	j := readJournal(s.journalHome(), s.sessionID, s.inherited)
	answered := s.acct.Answered()
	journalMeasured := j.t.records > 0 && (j.t.basis() > answered || lowerBound <= 0) && (j.t.nonZero() || lowerBound <= 0)
	switch {
	case journalMeasured && (!telMeasured || j.t.basis() > s.tel.basis()):
		return s.acct.Answer(lowerBound, j.t.count(), "journal"), true
	case telMeasured:
		return s.acct.Answer(lowerBound, s.tel.count(), "telemetry"), true
	}
	s.acct.Nothing(lowerBound)
	return measure.Figure{}, false
}
