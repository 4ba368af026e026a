package codex

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzMS16_DecodeLine(f *testing.F) {
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5,"cached_input_tokens":1,"output_tokens":2}}}}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"x"}}`))
	f.Add([]byte(`{"type":"turn_context","payload":{"model":"m"}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1e300}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := decodeLine(line)
		if !ok || !e.ok {
			return
		}
		for _, n := range []int64{e.total.input, e.total.cached, e.total.output} {
			if n < 0 || n > counterBound {
				t.Fatalf("counter %d outside [0, %d]", n, counterBound)
			}
		}
	})
}

// FuzzMS16_CodexRollout writes arbitrary bytes as the session's rollout in
// two parts, as a runtime mid-write would be seen: reading it never panics
// and the figure never goes down.
func FuzzMS16_CodexRollout(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(fixtureHome, rolloutDir, "rollout-2026-12-02T03-56-07-"+sessionB+".jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, uint16(5000))
	f.Add([]byte("{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":9,\"cached_input_tokens\":10,\"output_tokens\":2}}}}\n"), uint16(40))
	f.Fuzz(func(t *testing.T, content []byte, cut uint16) {
		home := t.TempDir()
		dir := filepath.Join(home, rolloutDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		s := New()
		if ok, _ := s.Claim(fakeLaunch(home)); !ok {
			t.Fatal("not claimed")
		}
		if err := s.Open(sessionB); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "rollout-2026-12-02T03-56-07-"+sessionB+".jsonl")
		at := int(cut) % (len(content) + 1)
		if err := os.WriteFile(path, content[:at], 0o600); err != nil {
			t.Fatal(err)
		}
		budget := int64(1 << 30)
		first := s.rollouts.Read(&budget)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(content[at:])
		_ = f.Close()
		second := s.rollouts.Read(&budget)
		if second.Usage.Input < first.Usage.Input || second.Usage.Output < first.Usage.Output || second.Records < first.Records {
			t.Fatalf("the count went down: %+v, then %+v", first, second)
		}
		if second.Usage.CacheRead > second.Usage.Input && second.Basis >= 0 {
			// Cached beyond input is the runtime's to report; the basis
			// must still not be what a bound is compared with blindly.
			t.Logf("cached %d over input %d", second.Usage.CacheRead, second.Usage.Input)
		}
		_ = s.Close()
	})
}
