package transcript

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/normalize"
)

// showWidth bounds the text of a timeline line after its time and party.
const showWidth = 100

// call is a request waiting for its answer in the timeline.
type call struct {
	method string
	at     int64
	prompt string // session/prompt's text
}

// turnLine is one session/prompt and how it ended.
type turnLine struct {
	prompt string
	took   time.Duration
	end    string
}

// Show writes t as a timeline for people: one line per entry with its time
// since the start, who it came from (the client acprun drove, the runtime,
// the runtime's stderr, its process) and what it said — methods with their
// ids, the prompt, the update kinds and their text, each answer with how
// long its request waited — then each turn with how long it took and how
// it ended.
func Show(w io.Writer, t *Transcript) error {
	bw := bufio.NewWriter(w)
	h := t.Header
	fmt.Fprintf(bw, "transcript of %s in %s\nrecorded %s by %s\n\n", h.Command, h.Cwd, h.Started, h.Recorder)
	s := timeline{out: bw, sent: map[string]call{}, recv: map[string]call{}}
	for _, e := range t.Entries {
		s.entry(e)
	}
	if len(s.turns) > 0 {
		fmt.Fprintf(bw, "\nturns\n")
		for i, tl := range s.turns {
			fmt.Fprintf(bw, "  %d  %8s  %s: %s\n", i+1, fmtTook(tl.took), quote(tl.prompt, 60), tl.end)
		}
	}
	return bw.Flush()
}

// timeline is Show's state: the requests of each side still unanswered.
type timeline struct {
	out   io.Writer
	sent  map[string]call // the client's requests, by id
	recv  map[string]call // the runtime's requests, by id
	turns []turnLine
	open  []int // turns whose prompt is unanswered, by index
}

func (s *timeline) line(at int64, who, format string, args ...any) {
	text := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	fmt.Fprintf(s.out, "%9.3fs  %-8s %s\n", float64(at)/1e9, who, clipRunes(text, showWidth))
}

func (s *timeline) entry(e Entry) {
	switch e.Kind {
	case KindSpawn:
		s.line(e.TNS, "process", "started, pid %s: %s", e.PID, strings.Join(e.Argv, " "))
	case KindExit:
		s.line(e.TNS, "process", "exited: %s", e.Status)
	case KindStderr:
		b, _ := e.Line()
		s.line(e.TNS, "stderr", "%s", b)
	case KindSend, KindRecv:
		b, err := e.Line()
		if err != nil {
			s.line(e.TNS, party(e.Kind), "(unreadable: %v)", err)
			return
		}
		s.message(e.TNS, e.Kind, b)
	}
}

// party names who wrote a line.
func party(kind string) string {
	if kind == KindSend {
		return "client"
	}
	return "runtime"
}

func (s *timeline) message(at int64, kind string, b []byte) {
	who := party(kind)
	m, ok := readMessage(b)
	if !ok {
		s.line(at, who, "a line that is not JSON-RPC: %s", b)
		return
	}
	mine, theirs := s.sent, s.recv // requests this side made, and the other's
	if kind == KindRecv {
		mine, theirs = s.recv, s.sent
	}
	id := string(m.ID)
	switch {
	case m.Method != "" && len(m.ID) > 0: // a request, "id": null too
		c := call{method: m.Method, at: at}
		what := summary(m.Method, m.Params)
		if m.Method == "session/prompt" {
			c.prompt = promptText(m.Params)
			s.open = append(s.open, len(s.turns))
			s.turns = append(s.turns, turnLine{prompt: c.prompt, end: "(no answer)"})
		}
		mine[id] = c
		s.line(at, who, "%s #%s%s", m.Method, id, what)
	case m.Method != "":
		s.line(at, who, "%s%s", m.Method, summary(m.Method, m.Params))
	default:
		c, ok := theirs[id]
		if !ok {
			s.line(at, who, "an answer to #%s, which nothing asked", id)
			return
		}
		delete(theirs, id)
		took := time.Duration(at - c.at)
		end := answerText(c.method, m)
		s.line(at, who, "answered %s #%s in %s: %s", c.method, id, fmtTook(took), end)
		if c.method == "session/prompt" && len(s.open) > 0 {
			i := s.open[0]
			s.open = s.open[1:]
			s.turns[i].took, s.turns[i].end = took, end
		}
	}
}

// summary is what a request or notification says, after its method.
func summary(method string, params json.RawMessage) string {
	switch method {
	case "session/prompt":
		return ": " + quote(promptText(params), 70)
	case "session/update":
		u, ok := normalize.Member(params, "update")
		if !ok {
			return ""
		}
		out := " " + str(u, "sessionUpdate")
		text, title, status := str(member(u, "content"), "text"), str(u, "title"), str(u, "status")
		switch {
		case text != "":
			out += " " + quote(text, 60)
		case title != "" || status != "":
			out += " " + strings.TrimSpace(status+" "+quote(title, 60))
		}
		return out
	case "session/request_permission":
		tc := member(params, "toolCall")
		if title, kind := str(tc, "title"), str(tc, "kind"); kind != "" || title != "" {
			return ": " + strings.TrimSpace(kind+" "+quote(title, 60))
		}
	}
	return ""
}

// answerText says how a request was answered: its error, or what its
// result means for the methods people follow.
func answerText(method string, m message) string {
	if m.Error != nil {
		var code int64
		_ = json.Unmarshal(member(m.Error, "code"), &code)
		return fmt.Sprintf("error %d: %s", code, str(m.Error, "message"))
	}
	outcome := member(m.Result, "outcome")
	switch {
	case method == "session/prompt" && str(m.Result, "stopReason") != "":
		return str(m.Result, "stopReason")
	case method == "session/new" && str(m.Result, "sessionId") != "":
		return "session " + str(m.Result, "sessionId")
	case method == "session/request_permission" && str(outcome, "optionId") != "":
		return str(outcome, "outcome") + " " + str(outcome, "optionId")
	case method == "session/request_permission" && str(outcome, "outcome") != "":
		return str(outcome, "outcome")
	}
	return "ok"
}

// promptText joins a session/prompt's text blocks.
func promptText(params json.RawMessage) string {
	var b strings.Builder
	normalize.Elements(member(params, "prompt"), func(block []byte) {
		b.WriteString(str(block, "text"))
	})
	return b.String()
}

// quote is s quoted on one line, clipped to max runes.
func quote(s string, max int) string {
	return fmt.Sprintf("%q", clipRunes(s, max))
}

func clipRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

// fmtTook renders a duration for people: milliseconds below a second.
func fmtTook(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
