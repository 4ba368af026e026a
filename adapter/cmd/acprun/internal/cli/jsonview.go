package cli

import (
	"bufio"
	"io"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter"
)

// view is what the run reports to: the readable view or the JSON lines.
// event is called from the adapter's goroutines while a turn is open; every
// other method from the run's goroutine, and interrupted from the signal
// watcher.
type view interface {
	status(label string)
	startBegin(command, cwd string)
	// served says, once, that the runtime is served at url, so what needs
	// a process (spawn, signals, a process's teardown) does not apply.
	served(url string)
	startupFailed(err error)
	sessionStarted(s Session, took time.Duration)
	resumed(r resumeReport)
	turnBegin(n, total int, prompt string)
	event(e adapter.Event)
	// wire receives the adapter's wire tap, from its goroutines.
	wire(e adapter.WireEvent)
	turnEnd(t turnReport)
	interrupted(hard bool)
	// pause keeps the view off the terminal while a question is on it
	// (--permissions ask), until resume is called.
	pause() (resume func())
	stopBegin()
	finish(r runReport)
	close()
}

// jsonEvent is one normalized event on a line. Every member is always
// present, so a script can index any of them without checking.
type jsonEvent struct {
	Type           string     `json:"type"`
	Time           string     `json:"time"`
	Message        string     `json:"message"`
	SessionID      string     `json:"session_id"`
	AgentPID       string     `json:"agent_pid"`
	ToolName       string     `json:"tool_name"`
	ToolDurationMS int64      `json:"tool_duration_ms"`
	ToolError      bool       `json:"tool_error"`
	Usage          *jsonUsage `json:"usage"`
	Model          string     `json:"model"`
}

// jsonUsage is adapter.Usage with the snake_case names of the other members.
type jsonUsage struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Total     int64 `json:"total"`
	CacheRead int64 `json:"cache_read"`
}

// jsonStartupFailed is printed when the session did not start.
type jsonStartupFailed struct {
	Type      string `json:"type"`
	ErrorKind string `json:"error_kind"`
	Message   string `json:"message"`
}

// jsonResume says what became of --resume; it follows the start.
type jsonResume struct {
	Type      string `json:"type"`
	Requested string `json:"requested"`
	SessionID string `json:"session_id"`
	Continued bool   `json:"continued"`
	Route     string `json:"route"`
	Reason    string `json:"reason"`
}

// jsonResult is always the last line.
type jsonResult struct {
	Type       string `json:"type"`
	ExitReason string `json:"exit_reason"`
	ErrorKind  string `json:"error_kind"`
	Message    string `json:"message"`
	// Detail is the whole error behind Message (its cause, a runtime's
	// JSON-RPC error data, DI-11), or "" when Message says it all.
	Detail    string `json:"detail"`
	SessionID string `json:"session_id"`
	Turns     int    `json:"turns"`
	// PermissionsRefused counts the refused permission requests of every
	// turn; StoppedAtRefusal is true when a turn's runtime sent nothing
	// after its last refusal (DI-11).
	PermissionsRefused int  `json:"permissions_refused"`
	StoppedAtRefusal   bool `json:"stopped_at_refusal"`
}

// jsonTimeLayout is RFC 3339 with nanoseconds, always in UTC.
const jsonTimeLayout = time.RFC3339Nano

// jsonView writes one JSON object per line and nothing else.
type jsonView struct {
	mu     sync.Mutex
	w      *bufio.Writer
	enc    *json.Encoder
	stderr io.Writer
	// quietStall drops the empty notifications that only reset stall
	// timers (EV-3), for scripts that keep no such timer.
	quietStall bool
}

// newJSONView writes the JSON lines to w; interrupt notes, meant for a person
// at the keyboard, go to stderr.
func newJSONView(w, stderr io.Writer) *jsonView {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &jsonView{w: bw, enc: enc, stderr: stderr}
}

// write encodes v as one line and flushes it, so a reader sees each event
// as it happens. A failed write (a closed pipe) has nowhere to be reported.
func (j *jsonView) write(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(v)
	_ = j.w.Flush()
}

func toJSONEvent(e adapter.Event) jsonEvent {
	out := jsonEvent{
		Type:           string(e.Type),
		Message:        e.Message,
		SessionID:      e.SessionID,
		AgentPID:       e.AgentPID,
		ToolName:       e.ToolName,
		ToolDurationMS: e.ToolDurationMS,
		ToolError:      e.ToolError,
		Model:          e.Model,
	}
	if !e.Time.IsZero() {
		out.Time = e.Time.UTC().Format(jsonTimeLayout)
	}
	if e.Usage != nil {
		out.Usage = &jsonUsage{Input: e.Usage.Input, Output: e.Usage.Output, Total: e.Usage.Total, CacheRead: e.Usage.CacheRead}
	}
	return out
}

func (j *jsonView) event(e adapter.Event) {
	if j.quietStall && e.Type == adapter.EventNotification && e.Message == "" {
		return
	}
	j.write(toJSONEvent(e))
}

// jsonServed is the served line: the runtime is reached over the network.
type jsonServed struct {
	Type    string `json:"type"`
	URL     string `json:"url"`
	Message string `json:"message"`
}

func (j *jsonView) served(url string) {
	j.write(jsonServed{Type: "served", URL: url, Message: servedNote(url)})
}

func (j *jsonView) startupFailed(err error) {
	j.write(jsonStartupFailed{Type: string(adapter.EventStartupFailed), ErrorKind: string(adapter.KindOf(err)), Message: errText(err)})
}

func (j *jsonView) resumed(r resumeReport) {
	j.write(jsonResume{Type: "resume", Requested: r.Requested, SessionID: r.SessionID, Continued: r.Continued, Route: r.Route, Reason: r.Reason})
}

func (j *jsonView) interrupted(hard bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = io.WriteString(j.stderr, interruptNote(hard)+"\n")
}

func (j *jsonView) finish(r runReport) {
	res := jsonResult{
		Type:       "result",
		ExitReason: r.Reason,
		ErrorKind:  string(r.Kind),
		Message:    r.Message,
		Detail:     r.Detail,
		SessionID:  r.SessionID,
		Turns:      len(r.Turns),
	}
	for _, t := range r.Turns {
		res.PermissionsRefused += t.Result.PermissionsRefused
		res.StoppedAtRefusal = res.StoppedAtRefusal || stoppedAtRefusal(t.Result)
	}
	j.write(res)
}

// The JSON stream carries only events and the result; progress, interrupt
// notes and summaries belong to people.
func (j *jsonView) status(string)                         {}
func (j *jsonView) startBegin(string, string)             {}
func (j *jsonView) sessionStarted(Session, time.Duration) {}
func (j *jsonView) turnBegin(int, int, string)            {}
func (j *jsonView) turnEnd(turnReport)                    {}
func (j *jsonView) stopBegin()                            {}
func (j *jsonView) pause() func()                         { return func() {} }
func (j *jsonView) wire(adapter.WireEvent)                {}
func (j *jsonView) close()                                {}
