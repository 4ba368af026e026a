package transcript

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// showWidth bounds the text of a timeline line after its time and party.
const showWidth = 100

// message is the part of a JSON-RPC message the timeline reads.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

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
	var m message
	if json.Unmarshal(b, &m) != nil {
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
		var p struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Title   string `json:"title"`
				Status  string `json:"status"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &p) != nil {
			return ""
		}
		u := p.Update
		out := " " + u.Kind
		switch {
		case u.Content.Text != "":
			out += " " + quote(u.Content.Text, 60)
		case u.Title != "" || u.Status != "":
			out += " " + strings.TrimSpace(u.Status+" "+quote(u.Title, 60))
		}
		return out
	case "session/request_permission":
		var p struct {
			ToolCall struct {
				Title string `json:"title"`
				Kind  string `json:"kind"`
			} `json:"toolCall"`
		}
		if json.Unmarshal(params, &p) == nil && (p.ToolCall.Kind != "" || p.ToolCall.Title != "") {
			return ": " + strings.TrimSpace(p.ToolCall.Kind+" "+quote(p.ToolCall.Title, 60))
		}
	}
	return ""
}

// answerText says how a request was answered: its error, or what its
// result means for the methods people follow.
func answerText(method string, m message) string {
	if m.Error != nil {
		return fmt.Sprintf("error %d: %s", m.Error.Code, m.Error.Message)
	}
	var r struct {
		StopReason string `json:"stopReason"`
		SessionID  string `json:"sessionId"`
		Outcome    struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	_ = json.Unmarshal(m.Result, &r)
	switch {
	case method == "session/prompt" && r.StopReason != "":
		return r.StopReason
	case method == "session/new" && r.SessionID != "":
		return "session " + r.SessionID
	case method == "session/request_permission" && r.Outcome.OptionID != "":
		return r.Outcome.Outcome + " " + r.Outcome.OptionID
	case method == "session/request_permission" && r.Outcome.Outcome != "":
		return r.Outcome.Outcome
	}
	return "ok"
}

// promptText joins a session/prompt's text blocks.
func promptText(params json.RawMessage) string {
	var p struct {
		Prompt []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range p.Prompt {
		b.WriteString(c.Text)
	}
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
