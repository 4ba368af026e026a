package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/normalize"
)

// The readable view's second source: the runtime's own session/update
// notifications, read from the adapter's wire tap. Sortie sees an agent
// message whole when it completes (EV-5), and so does --json; a person on a
// terminal sees it stream as the runtime writes it. With -v the view adds
// what Sortie folds into "other" events: thought text, plan entries with
// their status, and each tool call's input and final content.

// maxShown bounds a tool input or content shown under -v.
const maxShown = 400

// The wire tap runs ahead of the events: the adapter reads a line, and its
// event follows through the session's pump. So what the tap reads is
// queued here, one queue per kind, and each event takes the next item of
// its kind: an agent text chunk's empty notification (EV-3) its text, a
// "reasoning block" its thought, a "plan update" its entries, a tool_result
// its call's input and content. Both streams are in wire order, so the
// view writes everything in the order the adapter reported it.
type wireQueue struct {
	chunks   []string
	thoughts []string
	plans    []string
	done     []toolDone
	inputs   map[string]string // tool call id → its input, from tool_call
}

// toolDone is a tool call's final update.
type toolDone struct {
	id, content string
}

func pop[T any](q *[]T) (T, bool) {
	var zero T
	if len(*q) == 0 {
		return zero, false
	}
	v := (*q)[0]
	*q = (*q)[1:]
	return v, true
}

// wire receives the adapter's tap; only lines the runtime sent matter.
func (v *textView) wire(e adapter.WireEvent) {
	if e.Kind != adapter.WireRecv {
		return
	}
	v.mu.Lock()
	v.noteRequest(e.Line)
	v.mu.Unlock()
	if !(v.live || v.verbose) {
		return
	}
	// A cheap test first: the decode is skipped for all but updates.
	if !bytes.Contains(e.Line, []byte(`"session/update"`)) {
		return
	}
	// The line is read as the adapter reads it: members by their exact
	// names, the params by gen's decoder, so a line the adapter does not
	// take for an update queues nothing its events could pick up.
	if method, _ := normalize.StringMember(e.Line, "method"); method != gen.MethodSessionUpdate {
		return
	}
	params, ok := normalize.Member(e.Line, "params")
	var n gen.SessionNotification
	if !ok || n.UnmarshalJSON(params) != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	q := &v.queue
	switch u := n.Update.(type) {
	case *gen.SessionUpdateAgentMessageChunk:
		if text, ok := blockText(u.Content); ok && v.live {
			q.chunks = append(q.chunks, text)
		}
	case *gen.SessionUpdateAgentThoughtChunk:
		if v.verbose {
			text, _ := blockText(u.Content)
			q.thoughts = append(q.thoughts, text)
		}
	case *gen.SessionUpdatePlan:
		if v.verbose {
			var b strings.Builder
			for i, p := range u.Entries {
				if i > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "[%s] %s", p.Status, p.Content)
			}
			q.plans = append(q.plans, b.String())
		}
	case *gen.SessionUpdateToolCall:
		if v.verbose {
			if q.inputs == nil {
				q.inputs = map[string]string{}
			}
			q.inputs[string(u.ToolCallID)] = compactJSON(u.RawInput)
		}
	case *gen.SessionUpdateToolCallUpdate:
		if v.verbose {
			if in := compactJSON(u.RawInput); in != "" {
				if q.inputs == nil {
					q.inputs = map[string]string{}
				}
				q.inputs[string(u.ToolCallID)] = in
			}
			if u.Status != nil && (*u.Status == gen.ToolCallStatusCompleted || *u.Status == gen.ToolCallStatusFailed) {
				q.done = append(q.done, toolDone{id: string(u.ToolCallID), content: toolContentText(u.Content)})
			}
		}
	}
}

// chunkEvent streams the next queued agent text (live view); v.mu is held.
func (v *textView) chunkEvent() {
	if text, ok := pop(&v.queue.chunks); ok {
		v.stream(streamAgent, text)
	}
}

// otherEvent renders a "reasoning block" or "plan update" with what the
// runtime sent (-v); false leaves the plain label to the caller. v.mu is
// held.
func (v *textView) otherEvent(msg string) bool {
	if !v.verbose {
		return false
	}
	switch msg {
	case "reasoning block":
		if text, ok := pop(&v.queue.thoughts); ok {
			v.stream(streamThought, text)
			return true
		}
	case "plan update":
		if text, ok := pop(&v.queue.plans); ok {
			v.tagged(ansiDim, "plan", text)
			return true
		}
	}
	return false
}

// toolEvent adds a finished tool call's input and content (-v); v.mu is
// held.
func (v *textView) toolEvent() {
	if !v.verbose {
		return
	}
	d, ok := pop(&v.queue.done)
	if !ok {
		return
	}
	if in := v.queue.inputs[d.id]; in != "" {
		v.tagged(ansiDim, "input", in)
	}
	delete(v.queue.inputs, d.id)
	if d.content != "" {
		v.tagged(ansiDim, "output", d.content)
	}
}

// Streams the view writes as they arrive.
const (
	streamAgent   = "agent"
	streamThought = "thought"
)

// stream writes a chunk of a streamed message: a tagged line begins the
// stream, further chunks continue it, and newlines indent under the tag.
// Without the live view a stream is collected and written whole when it
// ends. v.mu is held.
func (v *textView) stream(kind, text string) {
	if kind == streamAgent {
		v.agentStreamed = true
	}
	if text == "" {
		return
	}
	if v.streamKind != kind {
		v.endStream()
		v.streamKind = kind
	}
	if !v.live {
		v.streamBuf.WriteString(text)
		return
	}
	v.clearBelow()
	if v.drawn {
		io.WriteString(v.w, ansiClearLine)
		v.drawn = false
	}
	if !v.streamOpen {
		color := ansiBold
		if kind == streamThought {
			color = ansiDim
		}
		fmt.Fprintf(v.w, "  %s ", v.paint(color, fmt.Sprintf("%-*s", tagWidth-1, kind)))
		v.streamOpen, v.wrap = true, wrapState{col: textIndent}
	}
	width := 0
	if v.width != nil {
		width = v.width()
	}
	var out string
	out, v.wrap = wrapText(text, v.wrap, textIndent, width)
	io.WriteString(v.w, out)
	v.lastChunk = v.now()
	if v.waiting {
		v.since = v.lastChunk
	}
}

// wrapState is where wrapped text stands: the column, whether it ends
// inside a word, and the spaces after it not yet written (a line never
// ends in spaces: those where it breaks are dropped).
type wrapState struct {
	col     int
	midWord bool
	spaces  string
}

// wrapText lays text out from st on a line whose further lines start at
// column indent, for a terminal width columns wide (0: no wrapping): a
// newline goes on indented, and a word that would cross the edge starts
// the next line, unless it continues one written before (st.midWord) or is
// longer than a line, which break at the edge. It returns the text to
// write and where it leaves off. Columns count runes; tabs become spaces.
func wrapText(text string, st wrapState, indent, width int) (string, wrapState) {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	newline := func() {
		b.WriteString("\n" + pad)
		st.col, st.spaces = indent, ""
	}
	rs := []rune(text)
	for i := 0; i < len(rs); {
		switch r := rs[i]; r {
		case '\n':
			newline()
			st.midWord = false
			i++
		case ' ':
			st.spaces += " "
			st.midWord = false
			i++
		case '\t':
			// A tab stops every four columns from the indent, as spaces:
			// a terminal's own stops would not be counted.
			at := st.col + len(st.spaces) - indent
			st.spaces += strings.Repeat(" ", 4-(at%4+4)%4)
			st.midWord = false
			i++
		default:
			j := i
			for j < len(rs) && rs[j] != '\n' && rs[j] != ' ' && rs[j] != '\t' {
				j++
			}
			fresh := !st.midWord && st.col > indent
			if width > 0 && (fresh && st.col+len(st.spaces)+j-i > width || st.col+len(st.spaces) >= width) {
				newline()
			} else {
				b.WriteString(st.spaces)
				st.col += len(st.spaces)
				st.spaces = ""
			}
			for _, wr := range rs[i:j] {
				if width > 0 && st.col >= width {
					newline()
				}
				b.WriteRune(wr)
				st.col++
			}
			st.midWord = true
			i = j
		}
	}
	return b.String(), st
}

// endStream finishes the stream in progress, if any. v.mu is held.
func (v *textView) endStream() {
	v.clearBelow()
	switch {
	case v.streamOpen:
		io.WriteString(v.w, "\n")
		v.streamOpen = false
	case v.streamBuf.Len() > 0:
		text := v.streamBuf.String()
		v.streamBuf.Reset()
		v.streamKind = "" // tagged calls line, which must not recurse here
		v.tagged(ansiDim, streamThought, text)
	}
	v.streamKind = ""
}

// blockText is a text content block's text; false for any other content.
func blockText(c gen.ContentBlock) (string, bool) {
	b, ok := c.(*gen.ContentBlockText)
	if !ok {
		return "", false
	}
	return b.Text, true
}

// toolContentText renders a tool call's content for -v: text blocks, the
// paths of diffs, terminals by name.
func toolContentText(items []gen.ToolCallContent) string {
	var parts []string
	for _, it := range items {
		switch it := it.(type) {
		case *gen.ToolCallContentContent:
			if text, ok := blockText(it.Content); ok && text != "" {
				parts = append(parts, text)
			}
		case *gen.ToolCallContentDiff:
			parts = append(parts, "diff of "+it.Path)
		case *gen.ToolCallContentTerminal:
			parts = append(parts, "terminal output")
		}
	}
	return clip(strings.Join(parts, "\n"))
}

// compactJSON renders raw on one line, clipped; "" for none or null.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return clip(string(raw))
	}
	return clip(b.String())
}

func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
