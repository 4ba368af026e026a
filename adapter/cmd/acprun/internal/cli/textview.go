package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"acpkit.dev/adapter"
)

// ANSI sequences of the live view.
const (
	ansiClearLine = "\r\x1b[2K"
	ansiReset     = "\x1b[0m"
	ansiBold      = "\x1b[1m"
	ansiDim       = "\x1b[2m"
	ansiRed       = "\x1b[31m"
	ansiGreen     = "\x1b[32m"
	ansiYellow    = "\x1b[33m"
	ansiCyan      = "\x1b[36m"
)

// The sequences that draw the indicator below a paused message:
// ansiEraseLine erases the line the cursor is on, ansiEraseBelow from the
// cursor to the end of the screen, ansiUp moves one line up and ansiColumn
// (with fmt) to a 1-based column.
const (
	ansiEraseLine  = "\x1b[2K"
	ansiEraseBelow = "\x1b[J"
	ansiUp         = "\x1b[1A"
	ansiColumn     = "\x1b[%dG"
)

// spinnerFrames animate the progress indicator.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// tagWidth aligns the event lines' text after their tag.
const tagWidth = 10

// textIndent is the column the text of an event line starts at, and where
// its further lines are indented to.
const textIndent = 2 + tagWidth

// streamPause is how long an open message must stay silent before the
// progress indicator comes back, on the line below it.
const streamPause = 500 * time.Millisecond

// textView is the readable view. Without live it writes plain lines only,
// identical from run to run but for what the runtime and the clock report;
// live, agent text streams as it arrives, wrapped under its tag to the
// terminal's width; with color too (escape codes allowed) it adds colour
// and a progress indicator redrawn on every tick while acprun waits on the
// runtime.
type textView struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	color bool
	now   func() time.Time
	// width is the terminal's width in columns; nil or 0 wraps nothing.
	width func() int
	// paused: a question is on the terminal (--permissions ask); nothing
	// is drawn over it.
	paused bool
	// starting is the start's line, written before the next one.
	starting string

	waiting bool      // the progress indicator is shown
	label   string    // what acprun waits for
	since   time.Time // when the wait began
	frame   int
	drawn   bool // the indicator occupies the current line
	chunks  int  // streamed text chunks of the message being written
	// failShown is set once a failure line showed the run's message, so
	// the summary does not repeat it.
	failShown bool

	// verbose adds thoughts, plans and tool inputs and outputs (-v).
	verbose bool
	// The stream in progress (liveview.go): its kind, whether its line is
	// open on the terminal, the text collected without the live view, and
	// whether agent text streamed since the last completed message. Live,
	// wrap is where the open line stands, lastChunk when text last
	// arrived, and below whether the indicator is drawn on the line below.
	streamKind    string
	streamOpen    bool
	streamBuf     strings.Builder
	agentStreamed bool
	wrap          wrapState
	lastChunk     time.Time
	below         bool
	// queue holds what the wire tap read until its event arrives.
	queue wireQueue

	quit chan struct{}
	done chan struct{}
}

func newTextView(w io.Writer, live, color bool, tick <-chan time.Time, now func() time.Time) *textView {
	v := &textView{w: w, live: live, color: live && color, now: now, quit: make(chan struct{}), done: make(chan struct{})}
	if v.color && tick != nil {
		go v.spin(tick)
	} else {
		close(v.done)
	}
	return v
}

// spin redraws the progress indicator on every tick until close.
func (v *textView) spin(tick <-chan time.Time) {
	defer close(v.done)
	for {
		select {
		case <-v.quit:
			return
		case <-tick:
			v.mu.Lock()
			v.drawSpinner()
			v.mu.Unlock()
		}
	}
}

// drawSpinner draws the indicator line; v.mu is held. A streaming line is
// never overdrawn: while its message pauses, the indicator runs on the line
// below and the cursor goes back to where the text continues.
func (v *textView) drawSpinner() {
	if !v.waiting || v.paused || !v.color {
		return
	}
	if v.streamOpen && (v.now().Sub(v.lastChunk) < streamPause || v.wrap.col >= v.cols()) {
		return
	}
	v.frame = (v.frame + 1) % len(spinnerFrames)
	label := v.label
	if v.chunks > 0 {
		label = fmt.Sprintf("the agent is writing (%d %s)", v.chunks, plural(v.chunks, "chunk", "chunks"))
	}
	elapsed := v.now().Sub(v.since)
	indicator := fmt.Sprintf("%s %s %s", v.paint(ansiCyan, spinnerFrames[v.frame]), label, v.paint(ansiDim, fmtDur(elapsed)))
	if v.streamOpen {
		fmt.Fprintf(v.w, "\r\n%s%s%s"+ansiColumn, ansiEraseLine, indicator, ansiUp, v.wrap.col+1)
		v.below = true
		return
	}
	fmt.Fprintf(v.w, "%s%s", ansiClearLine, indicator)
	v.drawn = true
}

// cols is the terminal's width, or a width nothing reaches when unknown.
func (v *textView) cols() int {
	if v.width != nil {
		if w := v.width(); w > 0 {
			return w
		}
	}
	return math.MaxInt
}

// clearBelow erases the indicator drawn below an open message; v.mu is
// held.
func (v *textView) clearBelow() {
	if v.below {
		io.WriteString(v.w, ansiEraseBelow)
		v.below = false
	}
}

// pause clears the terminal for a question and keeps the indicator off it
// until resume: an open message ends its line (it continues on a new one).
func (v *textView) pause() (resume func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.makeRoom()
	v.paused = true
	return func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.paused = false
	}
}

// wait shows the indicator with label; v.mu is held.
func (v *textView) wait(label string) {
	v.waiting, v.label, v.since = true, label, v.now()
}

// line writes one line, first clearing the indicator; v.mu is held.
func (v *textView) line(format string, args ...any) {
	v.clearBelow()
	if v.streamKind != "" {
		v.endStream()
	}
	if v.drawn {
		io.WriteString(v.w, ansiClearLine)
		v.drawn = false
	}
	if s := v.starting; s != "" {
		v.starting = ""
		io.WriteString(v.w, s+"\n")
	}
	fmt.Fprintf(v.w, format+"\n", args...)
}

// tagged writes an event line: a fixed-width tag, then text whose further
// lines are indented under the first; live, lines longer than the terminal
// is wide wrap there, indented the same way.
func (v *textView) tagged(color, tag, text string) {
	width := 0
	if v.live && v.width != nil {
		width = v.width()
	}
	text, _ = wrapText(strings.TrimRight(text, "\n"), wrapState{col: textIndent}, textIndent, width)
	// One space always separates the tag, however long, from the text.
	v.line("  %s %s", v.paint(color, fmt.Sprintf("%-*s", tagWidth-1, tag)), text)
}

func (v *textView) paint(color, s string) string {
	if !v.color || color == "" {
		return s
	}
	return color + s + ansiReset
}

func (v *textView) status(label string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.wait(label)
}

func (v *textView) startBegin(command, cwd string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	// Written with the next line: a start that turns out to be a usage
	// error (an --auth-method the runtime does not advertise) leaves
	// stdout empty.
	v.starting = fmt.Sprintf("%s starting %s in %s", v.paint(ansiBold, "acprun"), command, cwd)
	v.wait("starting the runtime")
}

func (v *textView) served(url string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line("  %-9s %s", v.paint(ansiDim, "served"), servedNote(url))
}

// servedNote says once what a runtime served over the network lacks.
func servedNote(url string) string {
	return "the runtime is served at " + url + ": it has no process, so spawning, signalling and a process's teardown do not apply"
}

// pidNote is how a session's process is named: served runtimes have none.
func pidNote(pid string) string {
	if pid == "" {
		return "served"
	}
	return "agent pid " + pid
}

func (v *textView) startupFailed(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiting = false
	v.line("%s %s", v.paint(ansiRed, "startup failed:"), describeErr(adapter.KindOf(err), errText(err)))
	v.failShown = true
}

func (v *textView) sessionStarted(s Session, took time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiting = false
	v.line("session %s started (%s) in %s", s.ID, pidNote(s.AgentPID), fmtDur(took))
}

func (v *textView) resumed(r resumeReport) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r.Continued {
		v.line("resumed saved session %s through %s", r.Requested, r.Route)
		return
	}
	v.line("%s saved session %s was not continued; new session %s: %s", v.paint(ansiYellow, "resume:"), r.Requested, r.SessionID, r.Reason)
}

func (v *textView) turnBegin(n, total int, prompt string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line("%s %s", v.paint(ansiBold, fmt.Sprintf("turn %d/%d", n, total)), firstLine(prompt, 72))
	v.chunks, v.agentStreamed = 0, false
	v.wait("waiting for the agent")
}

func (v *textView) event(e adapter.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e.Type {
	case adapter.EventNotification:
		switch classifyNotice(e.Message) {
		case noticeChunk:
			// One streamed chunk (EV-3): the live view writes its text
			// now; otherwise the text arrives whole when the message
			// completes, exactly as Sortie sees it.
			v.chunks++
			if v.live {
				v.chunkEvent()
			}
			return
		case noticeAgentText:
			v.chunks = 0
			if v.agentStreamed {
				// The live view already wrote it as it arrived.
				v.agentStreamed = false
				v.endStream()
				break
			}
			v.tagged(ansiBold, "agent", e.Message)
		case noticeRefused:
			v.tagged(ansiYellow, "refused", e.Message)
		case noticeApproved:
			v.tagged(ansiGreen, "approved", e.Message)
		case noticeNeedsPerson:
			v.tagged(ansiYellow, "needs you", e.Message)
		case noticeGap:
			v.tagged(ansiYellow, "gap", e.Message)
		case noticeToolGated:
			v.tagged(ansiYellow, "gated", e.Message)
		}
	case adapter.EventToolResult:
		status, color := "ok", ansiGreen
		if e.ToolError {
			status, color = "failed", ansiRed
		}
		v.tagged(ansiCyan, "tool", fmt.Sprintf("%s %s %s  %s", e.ToolName, v.paint(color, status), fmtDur(time.Duration(e.ToolDurationMS)*time.Millisecond), e.Message))
		v.toolEvent()
	case adapter.EventOtherMessage:
		if !v.otherEvent(e.Message) {
			v.tagged(ansiDim, "other", e.Message)
		}
	case adapter.EventTokenUsage:
		if e.Usage != nil {
			v.tagged(ansiDim, "usage", fmt.Sprintf("input %d, output %d, total %d, cache read %d%s",
				e.Usage.Input, e.Usage.Output, e.Usage.Total, e.Usage.CacheRead, modelSuffix(e.Model)))
		}
	case adapter.EventMalformed:
		v.tagged(ansiRed, "malformed", e.Message)
	case adapter.EventSessionStarted, adapter.EventTurnCompleted, adapter.EventTurnFailed,
		adapter.EventTurnCancelled, adapter.EventTurnInputRequired, adapter.EventTurnEndedWithError:
		// The session line and turnEnd say these with more context.
		return
	default:
		v.tagged(ansiDim, string(e.Type), e.Message)
	}
	if v.waiting {
		v.since = v.now()
	}
}

func (v *textView) turnEnd(t turnReport) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiting = false
	head := fmt.Sprintf("turn %d", t.N)
	if t.Detail != "" {
		t.Message = t.Detail
	}
	if stoppedAtRefusal(t.Result) {
		v.tagged(ansiYellow, "note", msgStoppedAtRefusal)
	}
	switch t.Outcome {
	case adapter.EventTurnCompleted:
		v.line("%s %s in %s", head, v.paint(ansiGreen, "completed"), fmtDur(t.Took))
	case adapter.EventTurnCancelled:
		v.line("%s %s in %s: %s", head, v.paint(ansiYellow, "cancelled"), fmtDur(t.Took), describeErr(t.Kind, t.Message))
	case adapter.EventTurnInputRequired:
		v.line("%s %s in %s: %s", head, v.paint(ansiYellow, "needs a person"), fmtDur(t.Took), describeErr(t.Kind, t.Message))
	default:
		v.line("%s %s in %s: %s", head, v.paint(ansiRed, "failed"), fmtDur(t.Took), describeErr(t.Kind, t.Message))
	}
	v.failShown = t.Outcome != adapter.EventTurnCompleted
}

// interruptNote is what a person sees after pressing Ctrl-C.
func interruptNote(hard bool) string {
	if hard {
		return "acprun: interrupted again, stopping the runtime at once"
	}
	return "acprun: interrupted, cancelling (press Ctrl-C again to stop at once)"
}

func (v *textView) interrupted(hard bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line("%s", v.paint(ansiYellow, interruptNote(hard)))
}

func (v *textView) stopBegin() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.wait("stopping the session")
}

func (v *textView) finish(r runReport) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.waiting = false
	v.line("%s", v.paint(ansiBold, "summary"))
	row := func(k, val string) { v.line("  %-11s %s", k, val) }
	if r.SessionID != "" {
		row("session", fmt.Sprintf("%s (%s)", r.SessionID, pidNote(r.AgentPID)))
	}
	turns := fmt.Sprintf("%d", len(r.Turns))
	if r.Skipped > 0 {
		turns += fmt.Sprintf(" (%d not run)", r.Skipped)
	}
	row("turns", turns)
	color := ansiGreen
	if r.Status != ExitCompleted {
		color = ansiRed
	}
	row("result", v.paint(color, fmt.Sprintf("%s (exit %d)", r.Reason, r.Status)))
	if r.Kind != "" {
		row("error kind", string(r.Kind))
	}
	if r.Message != "" && !v.failShown {
		row("message", r.Message)
	}
	if len(r.Turns) > 0 {
		// The last turn carries the session's run-cumulative snapshot (MS-10);
		// an unmeasured session says so rather than showing zero (MS-15).
		res := r.Turns[len(r.Turns)-1].Result
		usage := "not measured"
		if res.UsageMeasured {
			usage = fmt.Sprintf("input %d, output %d, total %d, cache read %d%s",
				res.Usage.Input, res.Usage.Output, res.Usage.Total, res.Usage.CacheRead, modelSuffix(res.Model))
		}
		row("tokens", usage)
	}
	var per []string
	for _, t := range r.Turns {
		per = append(per, fmtDur(t.Took))
	}
	durs := "start " + fmtDur(r.StartTook)
	if len(per) > 0 {
		durs += ", turns " + strings.Join(per, " + ")
	}
	durs += ", stop " + fmtDur(r.StopTook) + ", total " + fmtDur(r.TotalTook)
	row("durations", durs)
	if r.StopErr != nil {
		row("stop error", r.StopErr.Error())
	}
}

// logWriter returns a writer for stderr that first clears the progress
// indicator, so log records never land in the middle of its line when both
// streams are the same terminal.
func (v *textView) logWriter(stderr io.Writer) io.Writer {
	if !v.live {
		return stderr
	}
	return writerFunc(func(p []byte) (int, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.makeRoom()
		return stderr.Write(p)
	})
}

// makeRoom leaves the cursor at the start of an empty line for something
// written past the view (a log record, a question): the indicator is
// erased, and an open message ends its line — it resumes on a new tagged
// one. v.mu is held.
func (v *textView) makeRoom() {
	v.clearBelow()
	if v.drawn {
		io.WriteString(v.w, ansiClearLine)
		v.drawn = false
	}
	if v.streamOpen {
		io.WriteString(v.w, "\n")
		v.streamOpen, v.streamKind = false, ""
	}
}

// writerFunc adapts a function to io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// close stops the progress indicator and clears its line.
func (v *textView) close() {
	close(v.quit)
	<-v.done
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearBelow()
	if v.drawn {
		io.WriteString(v.w, ansiClearLine)
		v.drawn = false
	}
}

// describeErr renders "kind: message", or the message alone without a kind.
func describeErr(kind adapter.Kind, msg string) string {
	if kind == "" {
		return msg
	}
	return string(kind) + ": " + msg
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func modelSuffix(model string) string {
	if model == "" {
		return ""
	}
	return ", model " + model
}

// fmtDur renders a duration for people: milliseconds below a second, else
// seconds with two decimals.
func fmtDur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// firstLine returns s's first line, cut to max runes with an ellipsis.
func firstLine(s string, max int) string {
	s, _, cut := strings.Cut(s, "\n")
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		return string(r[:max]) + "…"
	}
	if cut {
		return s + " …"
	}
	return s
}
