package codex

import (
	"bytes"
	"encoding/json"

	"acpkit.dev/adapter/internal/measure"
)

// counterBound is more tokens than any thread reports; a total above it is
// not a usage record, and differences can never overflow.
const counterBound = 1 << 50

// line is the part of a rollout line the source reads: the session_meta
// that opens the file, each turn_context (the turn's model) and each
// token_count event.
type line struct {
	Type    string `json:"type"`
	Payload *struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Model string `json:"model"`
		Info  *struct {
			Total *struct {
				Input  *int64 `json:"input_tokens"`
				Cached *int64 `json:"cached_input_tokens"`
				Output *int64 `json:"output_tokens"`
			} `json:"total_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// total is a thread's cumulative usage as a token_count event reports it:
// OpenAI's terms, cached among input and reasoning among output.
type total struct{ input, cached, output int64 }

// basis is the total in the terms of the lower bound codex-acp reports
// (_meta.quota.token_count: inputTokens is input less cached, measured).
func (t total) basis() int64 { return t.input - t.cached + t.output }

// entry is what one rollout line says.
type entry struct {
	// meta is the id of a session_meta line ("" otherwise).
	meta string
	// model is a turn_context's model.
	model string
	// total is a token_count's cumulative usage; ok says there was one.
	total total
	ok    bool
}

// decodeLine reads one rollout line. A token_count counts only when its
// total carries every counter the source maps (input, cached input,
// output); info is null on the events codex sends before any call.
func decodeLine(b []byte) (entry, bool) {
	if !bytes.Contains(b, []byte(`"token_count"`)) && !bytes.Contains(b, []byte(`"turn_context"`)) && !bytes.Contains(b, []byte(`"session_meta"`)) {
		return entry{}, false // most lines: no need to decode them
	}
	var l line
	if json.Unmarshal(b, &l) != nil || l.Payload == nil {
		return entry{}, false
	}
	p := l.Payload
	switch {
	case l.Type == "session_meta" && p.ID != "":
		return entry{meta: p.ID}, true
	case l.Type == "turn_context" && p.Model != "":
		return entry{model: p.Model}, true
	case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil && p.Info.Total != nil:
		t := p.Info.Total
		if t.Input == nil || t.Cached == nil || t.Output == nil {
			return entry{}, false
		}
		got := total{*t.Input, *t.Cached, *t.Output}
		for _, n := range []int64{got.input, got.cached, got.output} {
			if n < 0 || n > counterBound {
				return entry{}, false
			}
		}
		return entry{total: got, ok: true}, true
	}
	return entry{}, false
}

// since is what the thread spent from base to t, per counter, never
// negative.
func (t total) since(base total) total {
	return total{max(t.input-base.input, 0), max(t.cached-base.cached, 0), max(t.output-base.output, 0)}
}

// usage folds a total as every figure is: input holds the cached tokens
// (cache-read, a subset), output the reasoning tokens.
func (t total) usage() measure.Usage {
	return measure.Usage{Input: t.input, Output: t.output, Total: t.input + t.output, CacheRead: t.cached}
}
