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
// input), output = output_tokens (the Messages API counts thinking tokens
// among them; output_tokens_details.thinking_tokens is their share, not
// added again — the fake sends none, so this part is the API's word, not
// measured here).
package claude

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"acpkit.dev/adapter/internal/measure"
)

// RuntimeName is the agentInfo.name claude-agent-acp reports (0.101.0).
const RuntimeName = "@agentclientprotocol/claude-agent-acp"

// Name is the source's registry name.
const Name = "claude-agent-acp"

// runtime is how the source knows claude-agent-acp (MS-2, MS-3): its
// handshake name, its executable and its npm package.
var runtime = measure.Runtime{Name: RuntimeName, Programs: []string{"claude-agent-acp"}, Packages: []string{RuntimeName}}

// The drain's poll: Claude Code appends a reply's records as it streams,
// before the prompt's answer, so they are usually there at the first read;
// the bound leaves a loaded machine's file writes room.
const (
	pollEvery = 100 * time.Millisecond
	pollFor   = 5 * time.Second
)

// ErrUnkeyable is Open's error for a session id that cannot name a file.
var ErrUnkeyable = errors.New("claude measurement source: the session id cannot name a transcript")

// Source reads one session's usage from Claude Code's transcripts.
type Source struct {
	measure.FileSource
	transcripts transcripts
}

// New returns an unclaimed source.
func New() *Source {
	s := &Source{}
	s.FileSource = measure.FileSource{
		SourceName: Name, Runtime: runtime, Origin: "transcript", Records: &s.transcripts,
		PollEvery: pollEvery, PollFor: pollFor,
	}
	return s
}

// Factory is the registry's constructor for this source.
func Factory() measure.Source { return New() }

// transcripts is the read state of one session's transcript and its
// sub-agents' files.
type transcripts struct {
	sessionID string
	// config is the configuration directory the runtime writes to.
	config string
	// path is the session's transcript once found; files the read state
	// of it and of every sub-agent file.
	path      string
	files     map[string]*measure.Lines
	inherited map[string]bool
	t         tally
}

// Open finds the configuration directory the launched runtime sees
// (CLAUDE_CONFIG_DIR, else $HOME/.claude) and inherits every reply already
// in the session's files (a continued conversation's history).
func (r *transcripts) Open(l measure.Launch, sessionID string) error {
	if !measure.FileKey(sessionID) {
		return fmt.Errorf("%w: %q", ErrUnkeyable, sessionID)
	}
	config := l.Path("CLAUDE_CONFIG_DIR", ".claude")
	if config == "" {
		return errors.New("claude measurement source: no home directory to find the transcripts in")
	}
	*r = transcripts{sessionID: sessionID, config: config, files: map[string]*measure.Lines{}, inherited: map[string]bool{}}
	r.find()
	for path, lines := range r.files {
		lines.ReadTail(path, func(line []byte) {
			if rep, ok := decodeReply(line, sessionID); ok {
				r.inherited[rep.id] = true
			}
		})
	}
	return nil
}

// find looks for the session's transcript (created with the first prompt)
// and its sub-agents' files (created when one starts), by the session id
// alone: <config>/projects/*/<id>.jsonl and the subagents directory beside
// it. Each workspace the session ran in has its own directory; ids are
// unique, so the first found is the session's.
func (r *transcripts) find() {
	if r.path != "" {
		if _, err := os.Stat(r.path); err != nil {
			r.path = "" // moved away: look for it again
		}
	}
	if r.path == "" {
		projects := filepath.Join(r.config, "projects")
		dirs, _ := os.ReadDir(projects)
		for _, d := range dirs {
			p := filepath.Join(projects, d.Name(), r.sessionID+".jsonl")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				r.path = p
				r.track(p)
				break
			}
		}
		if r.path == "" {
			return
		}
	}
	subs := filepath.Join(strings.TrimSuffix(r.path, ".jsonl"), "subagents")
	entries, _ := os.ReadDir(subs)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			r.track(filepath.Join(subs, e.Name()))
		}
	}
}

func (r *transcripts) track(path string) {
	if r.files[path] == nil {
		r.files[path] = &measure.Lines{}
	}
}

// Read folds every reply written since the last read, within budget.
func (r *transcripts) Read(budget *int64) measure.Count {
	r.find()
	for path, lines := range r.files {
		lines.Read(path, budget, func(line []byte) {
			if rep, ok := decodeReply(line, r.sessionID); ok {
				r.t.add(rep, r.inherited)
			}
		})
	}
	return r.t.count()
}

// Count is the replies' count since Open.
func (r *transcripts) Count() measure.Count { return r.t.count() }
