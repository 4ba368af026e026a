package claude

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzMS16_DecodeReply(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","sessionId":"s","isSidechain":true,"message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`))
	f.Add([]byte(`{"type":"assistant","sessionId":"s","message":{"id":"m","usage":{"input_tokens":1e300,"output_tokens":-2,"cache_read_input_tokens":null}}}`))
	f.Add([]byte(`{"type":"assistant","message":"assistant"}`))
	f.Add([]byte(`["assistant"]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := decodeReply(line, "s")
		if !ok {
			return
		}
		if r.id == "" {
			t.Fatal("a reply without a message id")
		}
		for _, n := range []int64{r.u.input, r.u.output, r.u.cacheCreation, r.u.cacheRead} {
			if n < 0 || n > counterBound {
				t.Fatalf("counter %d outside [0, %d]", n, counterBound)
			}
		}
	})
}

// FuzzMS16_ClaudeTranscript writes arbitrary bytes as a session's
// transcript in two parts, as a runtime mid-write would be seen: reading
// it never panics, and a figure never goes down or counts a message twice.
func FuzzMS16_ClaudeTranscript(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(fixtureProjects, "-tmp-work", sessionA+".jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:4096], uint16(1000))
	f.Add([]byte("{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"cache_read_input_tokens\":3,\"cache_creation_input_tokens\":4}}}\n"), uint16(30))
	f.Fuzz(func(t *testing.T, content []byte, cut uint16) {
		cfg := t.TempDir()
		dir := filepath.Join(cfg, "projects", "w")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		s := New()
		s.PollEvery, s.PollFor = 1, 1
		if ok, _ := s.Claim(fakeLaunch(cfg)); !ok {
			t.Fatal("not claimed")
		}
		if err := s.Open(sessionA); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, sessionA+".jsonl")
		at := int(cut) % (len(content) + 1)
		if err := os.WriteFile(path, content[:at], 0o600); err != nil {
			t.Fatal(err)
		}
		budget := int64(1 << 30)
		first := s.transcripts.Read(&budget)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(content[at:])
		_ = f.Close()
		second := s.transcripts.Read(&budget)
		if second.Basis < first.Basis || second.Records < first.Records {
			t.Fatalf("the count went down: %+v, then %+v", first, second)
		}
		if second.Records > len(s.transcripts.t.byID) {
			t.Fatalf("%d records for %d messages", second.Records, len(s.transcripts.t.byID))
		}
		_ = s.Close()
	})
}
