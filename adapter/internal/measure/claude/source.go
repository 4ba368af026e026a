// Package claude is the claude-agent-acp measurement source (MS-16): after
// each turn it reads the session's token counts from the transcript Claude
// Code writes anyway, where it writes it, keyed by the session's own id
// (MS-17). It arms nothing and redirects nothing: pointing the runtime at
// another configuration directory would log the user out.
//
// What claude-agent-acp 0.101.0 (Claude Code 2.1.318) writes, measured
// offline against the Anthropic fake of acpkit.dev/internal/fakemodel:
//
//   - The transcript is <config>/projects/<dir>/<session id>.jsonl, where
//     config is $CLAUDE_CONFIG_DIR when set, else $HOME/.claude, and dir is
//     the workspace with every character that is not a letter or a digit
//     replaced by '-' (/tmp/w/002 → -tmp-w-002). The ACP session id is the
//     file's name and every record's sessionId. The file appears with the
//     first prompt, not at session/new; a continued session (session/load)
//     appends to the same file. The source finds it by the id alone
//     (projects/*/<id>.jsonl), so no encoding of the workspace is assumed.
//   - Each model reply of the conversation is written as assistant records
//     {"type":"assistant","sessionId":…,"isSidechain":false,"message":{"id":
//     "msg_…","model":"…","usage":{"input_tokens":…,
//     "cache_creation_input_tokens":…,"cache_read_input_tokens":…,
//     "output_tokens":…,"output_tokens_details":{"thinking_tokens":…},…}}}:
//     the figures the API returned. A reply of several content blocks (text,
//     then a tool call) is written as one record per block, each under the
//     same message id and usage, so a message counts once. Other record types
//     interleave (user, attachment, api-request, api-request-blob,
//     queue-operation, last-prompt, atis-latch, cost-state, …) and are not
//     read.
//   - A sub-agent's replies (the Agent tool) are written the same way, with
//     isSidechain true and the parent's sessionId, to
//     <config>/projects/<dir>/<session id>/subagents/agent-<id>.jsonl. They
//     are the session's spend and are counted; the model of record is still
//     the conversation's own.
//   - The session-title call (a request offering no tools) and the
//     prompt-suggestion call that may follow a turn are not written as
//     records of their own: the title calls reach the file only inside the
//     cost-state record's per-model totals, written when the session closes,
//     and the suggestion calls not at all. So they are not counted: no record
//     of the turn carries them. The lower bound claude-agent-acp reports
//     (_meta.quota.token_count, in camelCase) leaves out both, and the
//     sub-agents too.
//
// A figure folds the replies as input = input_tokens +
// cache_creation_input_tokens + cache_read_input_tokens (every input token
// the model read), cache-read = cache_read_input_tokens (a subset of
// input), output = output_tokens (thinking tokens are among them).
package claude

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/measure"
)

// RuntimeName is the agentInfo.name claude-agent-acp reports (0.101.0).
const RuntimeName = "@agentclientprotocol/claude-agent-acp"

// Name is the source's registry name.
const Name = "claude-agent-acp"

// The claim rule's names (MS-2): the executable and the npm package.
var (
	programs = []string{"claude-agent-acp"}
	packages = []string{RuntimeName}
)

// The drain's poll: Claude Code appends a reply's records as it streams,
// before the prompt's answer, so they are usually there at the first read;
// the bound leaves a loaded machine's file writes room.
const (
	pollEvery = 100 * time.Millisecond
	pollFor   = 5 * time.Second
)

// origin names this source's figures in LOG-24's record.
const origin = "transcript"

// ErrUnkeyable is Open's error for a session id that cannot name a file.
var ErrUnkeyable = errors.New("claude measurement source: the session id cannot name a transcript")

// Source reads one session's usage from Claude Code's transcripts. Its
// methods are safe to call from different goroutines; Drain calls are
// serialized.
type Source struct {
	// pollEvery and pollFor are the drain's poll; tests shorten them.
	pollEvery, pollFor time.Duration

	mu      sync.Mutex
	launch  measure.Launch
	claimed bool
	closed  bool

	sessionID string
	// config is the configuration directory the runtime writes to.
	config string
	// transcript is the session's file once found; files the read state
	// of it and of every sub-agent file.
	transcript string
	files      map[string]*measure.Lines
	inherited  map[string]bool
	t          tally
	acct       measure.Account
}

var _ measure.Source = (*Source)(nil)

// New returns an unclaimed source.
func New() *Source { return &Source{pollEvery: pollEvery, pollFor: pollFor} }

// Factory is the registry's constructor for this source.
func Factory() measure.Source { return New() }

// Name identifies the source.
func (s *Source) Name() string { return Name }

// Recognize accepts exactly claude-agent-acp's handshake name; the version
// plays no part (MS-3).
func (s *Source) Recognize(runtimeName string) bool { return runtimeName == RuntimeName }

// Claim claims a local launch whose command line names claude-agent-acp,
// or a relaunch offer for the name it recognises (MS-2, RS-4). It arms no
// variable and creates no directory: the runtime writes its transcript
// anyway (MS-17).
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

// Open starts measuring sessionID: the configuration directory is the one
// the launched runtime sees, and every reply already in the session's
// files (a continued conversation's history) is inherited, never charged
// to this run.
func (s *Source) Open(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.claimed || s.closed {
		return errors.New("claude measurement source: open before a claim")
	}
	if !keyable(sessionID) {
		return fmt.Errorf("%w: %q", ErrUnkeyable, sessionID)
	}
	s.config = s.launch.Path("CLAUDE_CONFIG_DIR", ".claude")
	if s.config == "" {
		return errors.New("claude measurement source: no home directory to find the transcripts in")
	}
	s.sessionID, s.transcript = sessionID, ""
	s.files, s.inherited, s.t, s.acct = map[string]*measure.Lines{}, map[string]bool{}, tally{}, measure.Account{}
	s.find()
	for path, l := range s.files {
		l.ReadTail(path, func(line []byte) {
			if r, ok := decodeReply(line, sessionID); ok {
				s.inherited[r.id] = true
			}
		})
	}
	return nil
}

// keyable reports whether id can be a file name under the projects
// directory: a runtime's id never leads the reader elsewhere.
func keyable(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`+"\x00")
}

// find looks for the session's transcript (created with the first prompt)
// and its sub-agents' files (created when one starts), by the session id
// alone: <config>/projects/*/<id>.jsonl and the subagents directory beside
// it. Each workspace the session ran in has its own directory; ids are
// unique, so the first found is the session's.
func (s *Source) find() {
	if s.transcript != "" {
		if _, err := os.Stat(s.transcript); err != nil {
			s.transcript = "" // moved away: look for it again
		}
	}
	if s.transcript == "" {
		projects := filepath.Join(s.config, "projects")
		dirs, _ := os.ReadDir(projects)
		for _, d := range dirs {
			p := filepath.Join(projects, d.Name(), s.sessionID+".jsonl")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				s.transcript = p
				s.track(p)
				break
			}
		}
		if s.transcript == "" {
			return
		}
	}
	subs := filepath.Join(strings.TrimSuffix(s.transcript, ".jsonl"), "subagents")
	entries, _ := os.ReadDir(subs)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			s.track(filepath.Join(subs, e.Name()))
		}
	}
}

func (s *Source) track(path string) {
	if s.files[path] == nil {
		s.files[path] = &measure.Lines{}
	}
}

// read folds every reply written since the last read, within budget.
func (s *Source) read(budget *int64) measure.Count {
	s.find()
	for path, l := range s.files {
		l.Read(path, budget, func(line []byte) {
			if r, ok := decodeReply(line, s.sessionID); ok {
				s.t.add(r, s.inherited)
			}
		})
	}
	return s.t.count()
}

// Drain answers with the run-cumulative figure after a turn whose presence
// signal was lowerBound (MS-6..MS-12, as GEM-7, GEM-10..GEM-12 for one
// kind of record): polled every 100 ms for up to 5 s, ending as soon as
// the replies cover the turn's bound; at most 64 MiB read per drain.
func (s *Source) Drain(ctx context.Context, lowerBound int64) (measure.Figure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sessionID == "" {
		return measure.Figure{}, false
	}
	budget := int64(measure.DrainBound)
	return s.acct.Drain(ctx, lowerBound, s.pollEvery, s.pollFor, s.t.count(), func() measure.Count {
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
