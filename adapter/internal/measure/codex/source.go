// Package codex is the codex-acp measurement source (MS-16): after each
// turn it reads the session's token counts from the rollout file codex
// writes anyway, where it writes it, keyed by the session's own id (MS-17).
// It arms nothing and redirects nothing: pointing the runtime at another
// CODEX_HOME would log the user out.
//
// What codex-acp 2.6.0 (codex 0.166.0) writes, measured offline against the
// OpenAI Responses fake of acpkit.dev/internal/fakemodel:
//
//   - The rollout is <home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread id>.jsonl,
//     where home is $CODEX_HOME when set, else $HOME/.codex, and the date and
//     time are the thread's creation. The ACP session id is the codex thread
//     id: the file name ends with it, and the first line, session_meta,
//     carries it as payload.id (and payload.session_id). The file appears
//     with the first prompt; a continued session (session/load in a new
//     process) appends to the same file. The source finds it by the id
//     (sessions/*/*/*/rollout-*-<id>.jsonl) and reads no other session's.
//   - After each model call codex appends
//     {"type":"event_msg","payload":{"type":"token_count","info":{
//     "total_token_usage":{"input_tokens":…,"cached_input_tokens":…,
//     "cache_write_input_tokens":…,"output_tokens":…,"reasoning_output_tokens":…,
//     "total_tokens":…},"last_token_usage":{…the call's own…},
//     "model_context_window":…},"rate_limits":{…}}}.
//     total_token_usage is cumulative over the thread's whole life, the
//     continued history included (a resumed thread goes on from its last
//     total); last_token_usage is the one call's. In OpenAI's terms
//     input_tokens holds cached_input_tokens and output_tokens holds
//     reasoning_output_tokens (total_tokens = input + output). The source
//     reads the cumulative total: the thread's figure since Open is the last
//     total less the one the file held at Open, so an event written twice
//     counts nothing twice. Each turn's model is its turn_context record's
//     payload.model. Other lines (response_item, world_state,
//     token_usage_record, task_started, …) are not read.
//   - The session-title call (a request on another model, offering no tools)
//     runs in a thread of its own that writes no rollout: it is not counted,
//     and the lower bound codex-acp reports (_meta.quota.token_count, in
//     camelCase, inputTokens = input less cached) leaves it out too. No
//     sub-agent tool is offered in this configuration; a sub-agent thread
//     would write its own rollout under its own id, which is not read.
//
// A figure is input = input_tokens, cache-read = cached_input_tokens (a
// subset of input), output = output_tokens (reasoning among them).
package codex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/measure"
)

// RuntimeName is the agentInfo.name codex-acp reports (2.6.0).
const RuntimeName = "@agentclientprotocol/codex-acp"

// Name is the source's registry name.
const Name = "codex-acp"

// The claim rule's names (MS-2): the executable and the npm package.
var (
	programs = []string{"codex-acp"}
	packages = []string{RuntimeName}
)

// The drain's poll: codex appends the token_count before it ends the turn,
// so it is usually there at the first read.
const (
	pollEvery = 100 * time.Millisecond
	pollFor   = 5 * time.Second
)

// origin names this source's figures in LOG-24's record.
const origin = "rollout"

// ErrUnkeyable is Open's error for a session id that cannot name a file.
var ErrUnkeyable = errors.New("codex measurement source: the session id cannot name a rollout")

// rollout is the read state of one rollout file of the session.
type rollout struct {
	lines measure.Lines
	// foreign: its session_meta names another thread.
	foreign bool
}

// Source reads one session's usage from codex's rollout files. Its methods
// are safe to call from different goroutines; Drain calls are serialized.
type Source struct {
	// pollEvery and pollFor are the drain's poll; tests shorten them.
	pollEvery, pollFor time.Duration

	mu      sync.Mutex
	launch  measure.Launch
	claimed bool
	closed  bool

	sessionID string
	home      string
	files     map[string]*rollout
	// base is the thread's total when the session opened, last the
	// largest total read since (totals only grow).
	base, last total
	// records counts the token_count events read since Open, nonZero
	// those that moved the total (GEM-10).
	records, nonZero int
	model            string
	acct             measure.Account
}

var _ measure.Source = (*Source)(nil)

// New returns an unclaimed source.
func New() *Source { return &Source{pollEvery: pollEvery, pollFor: pollFor} }

// Factory is the registry's constructor for this source.
func Factory() measure.Source { return New() }

// Name identifies the source.
func (s *Source) Name() string { return Name }

// Recognize accepts exactly codex-acp's handshake name; the version plays
// no part (MS-3).
func (s *Source) Recognize(runtimeName string) bool { return runtimeName == RuntimeName }

// Claim claims a local launch whose command line names codex-acp, or a
// relaunch offer for the name it recognises (MS-2, RS-4). It arms no
// variable and creates no directory: codex writes its rollout anyway
// (MS-17).
func (s *Source) Claim(l measure.Launch) (bool, error) {
	switch {
	case l.Remote:
		return false, nil // MS-2, RS-7
	case l.RuntimeName != "":
		if !s.Recognize(l.RuntimeName) {
			return false, nil
		}
	case !measure.NamesRuntime(l.Argv(), programs, packages):
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launch, s.claimed = l, true
	return true, nil
}

// Env is empty: nothing is armed.
func (s *Source) Env() []string { return nil }

// Open starts measuring sessionID: codex's home is the one the launched
// runtime sees, and the thread's total so far (a continued session's
// history) is the base nothing is charged below.
func (s *Source) Open(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.claimed || s.closed {
		return errors.New("codex measurement source: open before a claim")
	}
	if sessionID == "" || strings.ContainsAny(sessionID, `/\*?[`+"\x00") || sessionID == "." || sessionID == ".." {
		return fmt.Errorf("%w: %q", ErrUnkeyable, sessionID)
	}
	s.home = s.launch.Path("CODEX_HOME", ".codex")
	if s.home == "" {
		return errors.New("codex measurement source: no home directory to find the rollouts in")
	}
	s.sessionID, s.files = sessionID, map[string]*rollout{}
	s.base, s.last, s.records, s.nonZero, s.model, s.acct = total{}, total{}, 0, 0, "", measure.Account{}
	s.find()
	for path, r := range s.files {
		r.lines.ReadTail(path, func(b []byte) { s.fold(r, b, true) })
	}
	s.base = s.last
	return nil
}

// find looks for the session's rollout files, which appear with the first
// prompt.
func (s *Source) find() {
	matches, _ := filepath.Glob(filepath.Join(s.home, "sessions", "*", "*", "*", "rollout-*-"+s.sessionID+".jsonl"))
	sort.Strings(matches)
	for _, p := range matches {
		if s.files[p] == nil {
			s.files[p] = &rollout{}
		}
	}
}

// fold applies one rollout line; opening is true while Open reads what was
// there before.
func (s *Source) fold(r *rollout, b []byte, opening bool) {
	e, ok := decodeLine(b)
	switch {
	case !ok:
	case e.meta != "":
		r.foreign = e.meta != s.sessionID
	case r.foreign:
	case e.model != "":
		s.model = e.model
	case e.ok:
		if !opening {
			s.records++
			if e.total.since(s.last) != (total{}) {
				s.nonZero++ // it moved the total: a call that spent
			}
		}
		if e.total.input+e.total.output >= s.last.input+s.last.output {
			s.last = e.total
		}
	}
}

// read folds every line written since the last read, within budget. A
// rollout not found yet is looked for at every read; once one is, a later
// one (a file codex started anew) at the start of each drain.
func (s *Source) read(budget *int64) measure.Count {
	if len(s.files) == 0 {
		s.find()
	}
	for path, r := range s.files {
		r.lines.Read(path, budget, func(b []byte) { s.fold(r, b, false) })
	}
	return s.count()
}

// count is the thread's spend since Open.
func (s *Source) count() measure.Count {
	d := s.last.since(s.base)
	return measure.Count{Usage: d.usage(), Basis: d.basis(), Records: s.records, NonZero: s.nonZero, Model: s.model}
}

// Drain answers with the run-cumulative figure after a turn whose presence
// signal was lowerBound (MS-6..MS-12, as GEM-7, GEM-10..GEM-12 for one
// kind of record): polled every 100 ms for up to 5 s, ending as soon as
// the total covers the turn's bound; at most 64 MiB read per drain.
func (s *Source) Drain(ctx context.Context, lowerBound int64) (measure.Figure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sessionID == "" {
		return measure.Figure{}, false
	}
	s.find()
	budget := int64(measure.DrainBound)
	return s.acct.Drain(ctx, lowerBound, s.pollEvery, s.pollFor, s.count(), func() measure.Count {
		return s.read(&budget)
	}, origin)
}

// Close ends the source; idempotent, and safe on a source that never
// claimed. There is nothing to remove.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.files = nil
	return nil
}
