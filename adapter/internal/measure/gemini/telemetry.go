package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"os"
)

// apiResponseEvent is the one telemetry record that counts (GEM-5).
const apiResponseEvent = "gemini_cli.api_response"

// telemetryValue is the part of a telemetry value the source reads. Only
// the value's own attributes are read: the resource's session.id is a
// start-up id, not the session's (issue #12). Spans and metrics decode to
// an empty shape and are ignored.
type telemetryValue struct {
	Attributes struct {
		EventName string `json:"event.name"`
		SessionID string `json:"session.id"`
		Model     string `json:"model"`
		Role      string `json:"role"`
		Input     *int64 `json:"input_token_count"`
		Output    *int64 `json:"output_token_count"`
		Cached    *int64 `json:"cached_content_token_count"`
		Thoughts  *int64 `json:"thoughts_token_count"`
	} `json:"attributes"`
}

// readTelemetry decodes the stream of JSON values in path from pos, at most
// readBound bytes, folding the session's api_response records into t. It
// returns the new position: past fully decoded values only, so a value the
// CLI is still writing is read again, whole, next time (GEM-4).
func readTelemetry(path string, pos int64, sessionID string, t *tally) int64 {
	f, err := os.Open(path)
	if err != nil {
		return pos
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < pos {
		return pos // replaced or truncated under us: wait, never re-count
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return pos
	}
	base := pos
	dec := json.NewDecoder(io.LimitReader(f, readBound))
	for {
		var v telemetryValue
		err := dec.Decode(&v)
		if err != nil {
			if _, wrongType := errors.AsType[*json.UnmarshalTypeError](err); !wrongType {
				// End of what is written (or of this drain's bound), a
				// half-written value, or bytes that are not JSON: stop
				// before them.
				return pos
			}
			// A whole value of an unexpected shape: not a record.
			pos = base + dec.InputOffset()
			continue
		}
		pos = base + dec.InputOffset()
		a := v.Attributes
		if a.EventName != apiResponseEvent || a.SessionID != sessionID {
			continue
		}
		// a record counts only with all four counters.
		if a.Input == nil || a.Output == nil || a.Cached == nil || a.Thoughts == nil {
			continue
		}
		t.add(*a.Input, *a.Output, *a.Cached, *a.Thoughts, a.Model, a.Role)
	}
}
