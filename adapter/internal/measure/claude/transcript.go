package claude

import (
	"bytes"
	"encoding/json"

	"acpkit.dev/adapter/internal/measure"
)

// syntheticModel is the model Claude Code names on an assistant record it
// made up itself (an API error shown as a reply): no model call.
const syntheticModel = "<synthetic>"

// counterBound is more tokens than any one reply reports; a record above
// it is not a reply's usage, and the sums can never overflow.
const counterBound = 1 << 40

// record is the part of a transcript line the source reads.
type record struct {
	Type        string `json:"type"`
	SessionID   string `json:"sessionId"`
	IsSidechain bool   `json:"isSidechain"`
	Message     *struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			Input         *int64 `json:"input_tokens"`
			Output        *int64 `json:"output_tokens"`
			CacheCreation *int64 `json:"cache_creation_input_tokens"`
			CacheRead     *int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// usage is one reply's four counters as the Messages API reports them:
// input leaves out the cache's reads and writes.
type usage struct{ input, output, cacheCreation, cacheRead int64 }

// reply is one model reply of the session: a message id and its usage.
type reply struct {
	id        string
	u         usage
	model     string
	sidechain bool
}

// decodeReply reads one transcript line: a reply when it is an assistant
// record of sessionID that names its message and carries every counter
// the source maps (MS rule, as GEM-5: input, output, cache creation, cache
// read). Anything else — other record types, other sessions' records,
// unknown shapes, half a line — is not a reply.
func decodeReply(line []byte, sessionID string) (reply, bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return reply{}, false // most lines: no need to decode them
	}
	var r record
	if json.Unmarshal(line, &r) != nil || r.Type != "assistant" || r.SessionID != sessionID {
		return reply{}, false
	}
	m := r.Message
	if m == nil || m.ID == "" || m.Usage == nil || m.Model == syntheticModel {
		return reply{}, false
	}
	u := m.Usage
	if u.Input == nil || u.Output == nil || u.CacheCreation == nil || u.CacheRead == nil {
		return reply{}, false
	}
	got := usage{*u.Input, *u.Output, *u.CacheCreation, *u.CacheRead}
	for _, n := range []int64{got.input, got.output, got.cacheCreation, got.cacheRead} {
		if n < 0 || n > counterBound {
			return reply{}, false
		}
	}
	return reply{id: m.ID, u: got, model: m.Model, sidechain: r.IsSidechain}, true
}

// tally sums the session's replies, each message once.
type tally struct {
	// byID is every reply counted; a streamed reply is written as one
	// record per content block, all under its message id, and the
	// counters only grow while it streams, so a message counts with the
	// largest value each counter reached.
	byID map[string]usage
	sum  usage
	// nonZero counts the messages with a non-zero counter (GEM-10).
	nonZero int
	// mainModel is the model of the last reply of the session's own
	// conversation, lastModel of the last reply of a sub-agent.
	mainModel, lastModel string
}

// add folds one reply; skip holds the ids of replies written before the
// session was opened (a continued conversation's history).
func (t *tally) add(r reply, skip map[string]bool) {
	if skip[r.id] {
		return
	}
	if t.byID == nil {
		t.byID = map[string]usage{}
	}
	old, seen := t.byID[r.id]
	u := usage{max(old.input, r.u.input), max(old.output, r.u.output), max(old.cacheCreation, r.u.cacheCreation), max(old.cacheRead, r.u.cacheRead)}
	t.byID[r.id] = u
	t.sum.input += u.input - old.input
	t.sum.output += u.output - old.output
	t.sum.cacheCreation += u.cacheCreation - old.cacheCreation
	t.sum.cacheRead += u.cacheRead - old.cacheRead
	if u != (usage{}) && (!seen || old == (usage{})) {
		t.nonZero++
	}
	if r.model != "" {
		t.lastModel = r.model
		if !r.sidechain {
			t.mainModel = r.model
		}
	}
}

// count is the tally as the source reports it. Input is every input token
// the model read, the cache's reads and writes among them (the Messages
// API counts them beside input_tokens), so cache-read is a subset of
// input, as in every figure (GEM-6); output is output_tokens, which the
// Messages API says already holds the thinking tokens. The basis is in the
// terms of the lower bound claude-agent-acp reports (_meta.quota.token_count's
// inputTokens and outputTokens, measured: input_tokens and output_tokens of
// the turn's main replies): input_tokens plus output_tokens.
func (t *tally) count() measure.Count {
	in := t.sum.input + t.sum.cacheCreation + t.sum.cacheRead
	model := t.mainModel
	if model == "" {
		model = t.lastModel
	}
	return measure.Count{
		Usage:   measure.Usage{Input: in, Output: t.sum.output, Total: in + t.sum.output, CacheRead: t.sum.cacheRead},
		Basis:   t.sum.input + t.sum.output,
		Records: len(t.byID),
		NonZero: t.nonZero,
		Model:   model,
	}
}
