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
	"acpkit.dev/internal/cmdline"
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
		c, err := parseFlags(args, flagInput{stdin: strings.NewReader("from stdin"), getwd: func() (string, error) { return "/wd", nil },
			// No fuzzed path is read (/dev/zero would never end).
			readFile: func(p string) ([]byte, error) { return []byte("file " + p), nil },
			checkMCP: func(string) error { return nil }})
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
		case errors.Is(err, cmdline.ErrHelp), errors.As(err, &ue):
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

// FuzzWrapText checks the live view's wrapping: no text is lost or
// reordered (spaces aside, which a break drops), and no line is wider
// than the terminal.
func FuzzWrapText(f *testing.F) {
	f.Add("The reference agent streams", "this text across lines", 30)
	f.Add("abcdefghijklmnopqrstuvwxyz", "\n\n  x", 14)
	f.Add("ééé ééé", "", 0)
	f.Fuzz(func(t *testing.T, a, b string, width int) {
		width %= 200
		if width != 0 && width <= textIndent {
			width = textIndent + 1
		}
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		st := wrapState{col: textIndent}
		outA, st := wrapText(a, st, textIndent, width)
		outB, _ := wrapText(b, st, textIndent, width)
		out := "  agent     " + outA + outB
		noSpace := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' || r == '\n' {
					return -1
				}
				return r
			}, s)
		}
		if noSpace(out[textIndent:]) != noSpace(a+b) {
			t.Fatalf("text changed: %q became %q", a+b, out)
		}
		if width == 0 {
			return
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Fatalf("a line of %d runes on a %d-column terminal: %q", n, width, l)
			}
		}
	})
}
