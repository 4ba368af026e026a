package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter"
)

// FuzzParseFlags checks that no command line panics and that every refusal
// is a UsageError (exit status 2) or a help request.
func FuzzParseFlags(f *testing.F) {
	for _, seed := range []string{
		"hello", "--json\x00hi", "--demo", "--verify-credential", "--turn-timeout\x00-1s\x00x",
		"--command\x00\x00p", "--cwd\x00rel\x00--mcp-config\x00m.json\x00p", "-h", "--log-level\x00loud\x00p",
		"p\x00--json\x00q", "--\x00--json", "-\x00-", "--file\x00/nonexistent", "--version",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		var stderr bytes.Buffer
		c, err := parseFlags(args, flagInput{stderr: &stderr, stdin: strings.NewReader("from stdin"), getwd: func() (string, error) { return "/wd", nil },
			// No fuzzed path is read (/dev/zero would never end).
			readFile: func(p string) ([]byte, error) { return []byte("file " + p), nil }})
		var ue *UsageError
		switch {
		case err == nil && c.Version:
		case err == nil:
			if len(c.Prompts) == 0 {
				t.Fatalf("a runnable config has no prompt: %+v", c)
			}
			if !strings.HasPrefix(c.Cwd, "/") {
				t.Fatalf("workspace %q is not absolute", c.Cwd)
			}
		case errors.Is(err, errHelp), errors.As(err, &ue):
		default:
			t.Fatalf("untyped error %v", err)
		}
	})
}

// FuzzJSONEventLine checks that any event becomes exactly one line of JSON
// that decodes back to the same members.
func FuzzJSONEventLine(f *testing.F) {
	f.Add("notification", "Hello.\nLine two", "read", int64(12), true, "m", int64(5))
	f.Add("tool_result", "\u2028\"quoted\" <html> &", "", int64(-1), false, "", int64(-1))
	f.Add("x", "bad \xff utf-8", "\x00", int64(0), false, "\t", int64(0))
	f.Fuzz(func(t *testing.T, typ, msg, tool string, ms int64, failed bool, model string, tokens int64) {
		e := adapter.Event{Type: adapter.EventType(typ), Time: epoch.Add(time.Duration(ms)), Message: msg,
			SessionID: tool, AgentPID: "1", ToolName: tool, ToolDurationMS: ms, ToolError: failed, Model: model}
		if tokens >= 0 {
			e.Usage = &adapter.Usage{Input: tokens, Output: tokens, Total: 2 * tokens, CacheRead: tokens}
		}
		var out bytes.Buffer
		v := newJSONView(&out, &bytes.Buffer{})
		v.event(e)
		line := out.Bytes()
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		var back jsonEvent
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		want := toJSONEvent(e)
		if utf8.ValidString(msg) && back.Message != want.Message {
			t.Fatalf("message %q came back as %q", want.Message, back.Message)
		}
		if back.ToolDurationMS != ms || back.ToolError != failed || (back.Usage == nil) != (e.Usage == nil) {
			t.Fatalf("members changed: %+v vs %+v", back, want)
		}
	})
}
