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
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"acpkit.dev/adapter/internal/measure"
)

// RuntimeName is the agentInfo.name codex-acp reports (2.6.0).
const RuntimeName = "@agentclientprotocol/codex-acp"

// Name is the source's registry name.
const Name = "codex-acp"

// runtime is how the source knows codex-acp (MS-2, MS-3): its handshake
// name, its executable and its npm package.
var runtime = measure.Runtime{Name: RuntimeName, Programs: []string{"codex-acp"}, Packages: []string{RuntimeName}}

// The drain's poll: codex appends the token_count before it ends the turn,
// so it is usually there at the first read.
const (
	pollEvery = 100 * time.Millisecond
	pollFor   = 5 * time.Second
)

// ErrUnkeyable is Open's error for a session id that cannot name a file.
var ErrUnkeyable = errors.New("codex measurement source: the session id cannot name a rollout")

// Source reads one session's usage from codex's rollout files.
type Source struct {
	measure.FileSource
	rollouts rollouts
}

// New returns an unclaimed source.
func New() *Source {
	s := &Source{}
	s.FileSource = measure.FileSource{
		SourceName: Name, Runtime: runtime, Origin: "rollout", Records: &s.rollouts,
		PollEvery: pollEvery, PollFor: pollFor,
	}
	return s
}

// Factory is the registry's constructor for this source.
func Factory() measure.Source { return New() }

// rollout is the read state of one rollout file of the session.
type rollout struct {
	lines measure.Lines
	// foreign: its session_meta names another thread.
	foreign bool
}

// rollouts is the read state of one session's rollout files.
type rollouts struct {
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
}

// Open finds codex's home the launched runtime sees (CODEX_HOME, else
// $HOME/.codex) and takes the thread's total so far (a continued session's
// history) as the base nothing is charged below.
func (r *rollouts) Open(l measure.Launch, sessionID string) error {
	if !measure.FileKey(sessionID) {
		return fmt.Errorf("%w: %q", ErrUnkeyable, sessionID)
	}
	home := l.Path("CODEX_HOME", ".codex")
	if home == "" {
		return errors.New("codex measurement source: no home directory to find the rollouts in")
	}
	*r = rollouts{sessionID: sessionID, home: home, files: map[string]*rollout{}}
	r.find()
	for path, f := range r.files {
		f.lines.ReadTail(path, func(b []byte) { r.fold(f, b, true) })
	}
	r.base = r.last
	return nil
}

// find looks for the session's rollout files, which appear with the first
// prompt: sessions/*/*/*/rollout-*-<id>.jsonl.
func (r *rollouts) find() {
	matches, _ := filepath.Glob(filepath.Join(r.home, "sessions", "*", "*", "*", "rollout-*-"+r.sessionID+".jsonl"))
	sort.Strings(matches)
	for _, p := range matches {
		if r.files[p] == nil {
			r.files[p] = &rollout{}
		}
	}
}

// fold applies one rollout line; opening is true while Open reads what was
// there before.
func (r *rollouts) fold(f *rollout, b []byte, opening bool) {
	e, ok := decodeLine(b)
	switch {
	case !ok:
	case e.meta != "":
		f.foreign = e.meta != r.sessionID
	case f.foreign:
	case e.model != "":
		r.model = e.model
	case e.ok:
		if !opening {
			r.records++
			if e.total.since(r.last) != (total{}) {
				r.nonZero++ // it moved the total: a call that spent
			}
		}
		if e.total.input+e.total.output >= r.last.input+r.last.output {
			r.last = e.total
		}
	}
}

// Read folds every line written since the last read, within budget. The
// rollout is looked for until it is found (a file replaced under its name
// is read again from its start, measure.Lines).
func (r *rollouts) Read(budget *int64) measure.Count {
	if len(r.files) == 0 {
		r.find()
	}
	for path, f := range r.files {
		f.lines.Read(path, budget, func(b []byte) { r.fold(f, b, false) })
	}
	return r.Count()
}

// Count is the thread's spend since Open.
func (r *rollouts) Count() measure.Count {
	d := r.last.since(r.base)
	return measure.Count{Usage: d.usage(), Basis: d.basis(), Records: r.records, NonZero: r.nonZero, Model: r.model}
}
