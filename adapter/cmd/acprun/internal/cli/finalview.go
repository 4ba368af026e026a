package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"acpkit.dev/adapter"
)

// finalView is --final: standard output gets the last agent message of a
// run that completed, and nothing else, so a script can take the answer
// as it is; what went wrong goes to standard error, one line each, and the
// exit status says how the run ended.
type finalView struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	last   string // the latest completed agent message
}

func newFinalView(stdout, stderr io.Writer) *finalView {
	return &finalView{stdout: stdout, stderr: stderr}
}

func (f *finalView) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = fmt.Fprintf(f.stderr, "acprun: "+format+"\n", args...)
}

func (f *finalView) event(e adapter.Event) {
	if e.Type == adapter.EventNotification && classifyNotice(e.Message) == noticeAgentText {
		f.mu.Lock()
		f.last = e.Message
		f.mu.Unlock()
	}
}

func (f *finalView) startupFailed(err error) {
	f.note("startup failed: %s", describeErr(adapter.KindOf(err), errText(err)))
}

func (f *finalView) turnEnd(t turnReport) {
	if stoppedAtRefusal(t.Result) {
		f.note("turn %d: %s", t.N, msgStoppedAtRefusal)
	}
	if t.Outcome == adapter.EventTurnCompleted {
		return
	}
	msg := t.Message
	if t.Detail != "" {
		msg = t.Detail
	}
	f.note("turn %d ended %s: %s", t.N, t.Outcome, describeErr(t.Kind, msg))
}

func (f *finalView) interrupted(hard bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = io.WriteString(f.stderr, interruptNote(hard)+"\n")
}

func (f *finalView) finish(r runReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Status != ExitCompleted || f.last == "" {
		return
	}
	_, _ = io.WriteString(f.stdout, f.last)
	if f.last[len(f.last)-1] != '\n' {
		_, _ = io.WriteString(f.stdout, "\n")
	}
}

// Progress, sessions and resumes are for people watching: --final shows
// none of them.
func (f *finalView) status(string)                         {}
func (f *finalView) startBegin(string, string)             {}
func (f *finalView) sessionStarted(Session, time.Duration) {}
func (f *finalView) resumed(resumeReport)                  {}
func (f *finalView) turnBegin(int, int, string)            {}
func (f *finalView) wire(adapter.WireEvent)                {}
func (f *finalView) stopBegin()                            {}
func (f *finalView) pause() func()                         { return func() {} }
func (f *finalView) close()                                {}

// served says on stderr, where --final's notes go, that the runtime has
// no process here, as the other views do.
func (f *finalView) served(url string) { f.note("%s", servedNote(url)) }
