package gemini

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzGEM4_ReadTelemetry(f *testing.F) {
	f.Add([]byte(`{"attributes":{"event.name":"gemini_cli.api_response","session.id":"s","model":"m","role":"main","input_token_count":1,"output_token_count":2,"cached_content_token_count":0,"thoughts_token_count":0}}`))
	f.Add([]byte(`{"attributes":{"event.name":5}} {"attributes":{"session.id":[1]}} {"resource":{}}`))
	f.Add([]byte(`{"attributes":{"event.name":"gemini_cli.api_response","session.id":"s","input_token_count":`))
	f.Add([]byte("[1,2]\n\"x\"\nnull\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "telemetry.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var tl tally
		pos := readTelemetry(path, 0, "s", &tl)
		if pos < 0 || pos > int64(len(data)) {
			t.Fatalf("position %d outside the file of %d bytes", pos, len(data))
		}
		// Reading again from the position never counts a value twice.
		before := tl.records
		if readTelemetry(path, pos, "s", &tl) != pos || tl.records != before {
			t.Fatal("a second read from the saved position moved or counted")
		}
	})
}

func FuzzGEM8_ReadJournal(f *testing.F) {
	f.Add([]byte("{\"sessionId\":\"s\"}\n{\"id\":\"a\",\"tokens\":{\"input\":1,\"output\":2,\"cached\":0,\"thoughts\":1}}\n"))
	f.Add([]byte("{\"sessionId\":\"s\"}\n{\"id\":5}\n{\"$set\":{}}\n{\"id\":\"a\",\"tokens\":null}\r\n{"))
	f.Add([]byte("not json\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		home := t.TempDir()
		dir := filepath.Join(home, ".gemini", "tmp", "p", "chats")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "session-x.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		j := readJournal(home, "s", nil)
		if j.t.records > len(j.ids) {
			t.Fatalf("%d records for %d ids", j.t.records, len(j.ids))
		}
	})
}
