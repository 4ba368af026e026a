package hostile

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/fakeagent"
)

// Scenario is the fakeagent scenario that runs the plan its arguments name
// (Args) in a child process, with the secret from its environment; the
// argument record=PATH appends what it writes and reads to PATH (see
// Record). Register it under the name "hostile".
func Scenario(a *fakeagent.Agent) {
	seed, size, rest, err := Parse(a.Args)
	if err != nil {
		a.Fail("%v", err)
	}
	rec := Discard()
	if path := rest["record"]; path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			a.Fail("record: %v", err)
		}
		rec = FileRecord(f)
	}
	os.Exit(Run(a, Generate(seed, size), os.Stderr, os.Getenv(SecretEnv), rec))
}

// Recorder is told what the runtime did: the sequence numbers it is about
// to write, and a trace of the messages it read and the answers it gave.
type Recorder interface {
	Wrote(seqs ...int)
	Trace(format string, args ...any)
}

// Discard records nothing.
func Discard() Recorder { return discard{} }

type discard struct{}

func (discard) Wrote(...int)         {}
func (discard) Trace(string, ...any) {}

// FileRecord appends to f: "w <seq>" per sequence number and "t <text>"
// per trace line (ReadRecord reads it back).
func FileRecord(f io.Writer) Recorder { return &fileRecord{w: f} }

type fileRecord struct {
	mu sync.Mutex
	w  io.Writer
}

func (r *fileRecord) Wrote(seqs ...int) {
	var b strings.Builder
	for _, s := range seqs {
		b.WriteString("w " + strconv.Itoa(s) + "\n")
	}
	r.mu.Lock()
	_, _ = io.WriteString(r.w, b.String())
	r.mu.Unlock()
}

func (r *fileRecord) Trace(format string, args ...any) {
	r.mu.Lock()
	_, _ = fmt.Fprintf(r.w, "t "+format+"\n", args...)
	r.mu.Unlock()
}

// Record is what a runtime recorded: the sequence numbers it wrote, in
// order, and its trace.
type Record struct {
	Wrote []int
	Trace []string
}

// ReadPrompt reports whether the runtime read turn i's prompt: a turn PM-7
// ended with a latched ending sent none.
func (r Record) ReadPrompt(i int) bool {
	return slices.Contains(r.Trace, fmt.Sprintf("read prompt %d", i))
}

// ReadRecord parses what FileRecord wrote.
func ReadRecord(text string) Record {
	var r Record
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "w "):
			n, err := strconv.Atoi(line[2:])
			if err == nil {
				r.Wrote = append(r.Wrote, n)
			}
		case strings.HasPrefix(line, "t "):
			r.Trace = append(r.Trace, line[2:])
		}
	}
	return r
}

// Settle is the runtime's pause at each prompt of the plan before it
// writes anything.
const Settle = time.Millisecond

// Run is the runtime: it answers the handshake, runs turn i of p for the
// prompt Prompt(i) and answers anything else the way a minimal runtime
// would, until its input ends. It returns the exit status. stderr receives
// the plan's stderr lines, secret is the credential they repeat.
func Run(a *fakeagent.Agent, p Plan, stderr io.Writer, secret string, rec Recorder) int {
	return run(a, p, stderr, secret, rec, nil)
}

// run is Run; a delay also ends when stop closes (the in-memory runtime's
// death).
func run(a *fakeagent.Agent, p Plan, stderr io.Writer, secret string, rec Recorder, stop <-chan struct{}) int {
	r := &runner{a: a, p: p, stderr: stderr, secret: secret, rec: rec, stop: stop, ready: make(chan struct{}, 1)}
	go r.read()
	if p.ExitBeforeInit {
		r.writeStderr(p.Stderr)
		return p.ExitCode
	}
	for {
		m, ok := r.next()
		if !ok {
			return 0
		}
		if exit, code := r.handle(m); exit {
			return code
		}
	}
}

type runner struct {
	a      *fakeagent.Agent
	p      Plan
	stderr io.Writer
	secret string
	rec    Recorder
	stop   <-chan struct{}

	// The input, read on its own goroutine as fast as it comes (a runtime
	// reads its stdin while it writes): mu guards inbox and ended; ready
	// has a token when either changed.
	mu    sync.Mutex
	inbox []fakeagent.Msg
	ended bool
	ready chan struct{}
	// pending holds messages read while the runtime waited for another.
	pending []fakeagent.Msg
	// cancelled: a session/cancel arrived while the current prompt was
	// open.
	cancelled bool
}

// read feeds the runtime's input to the inbox until it ends.
func (r *runner) read() {
	for {
		m, err := r.a.Read()
		if err != nil && len(m.Raw) == 0 {
			break // the input ended or broke
		}
		if err != nil {
			continue // a line that is not JSON
		}
		r.mu.Lock()
		r.inbox = append(r.inbox, m)
		r.mu.Unlock()
		r.wake()
	}
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
	r.wake()
}

func (r *runner) wake() {
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

// receive returns the next message read, waiting for one when wait is
// set; ok is false when there is none (the input ended, or nothing came
// yet without wait).
func (r *runner) receive(wait bool) (fakeagent.Msg, bool) {
	for {
		r.mu.Lock()
		if len(r.inbox) > 0 {
			m := r.inbox[0]
			r.inbox = r.inbox[1:]
			r.mu.Unlock()
			return m, true
		}
		ended := r.ended
		r.mu.Unlock()
		if ended || !wait {
			return fakeagent.Msg{}, false
		}
		<-r.ready
	}
}

// next returns the next message not yet handled, waiting for one.
func (r *runner) next() (fakeagent.Msg, bool) {
	if len(r.pending) > 0 {
		m := r.pending[0]
		r.pending = r.pending[1:]
		return m, true
	}
	return r.receive(true)
}

// take keeps m for later, noting a cancel for the open prompt.
func (r *runner) take(m fakeagent.Msg) {
	if m.Method == "session/cancel" {
		r.rec.Trace("read session/cancel during a prompt")
		r.cancelled = true
		return
	}
	r.pending = append(r.pending, m)
}

// poll takes whatever already arrived, without waiting.
func (r *runner) poll() {
	for {
		m, ok := r.receive(false)
		if !ok {
			return
		}
		r.take(m)
	}
}

// await waits until match accepts a message (which is consumed) or the
// input ends (false).
func (r *runner) await(match func(fakeagent.Msg) bool) bool {
	for {
		m, ok := r.receive(true)
		if !ok {
			return false
		}
		if match(m) {
			return true
		}
		r.take(m)
	}
}

func (r *runner) handle(m fakeagent.Msg) (exit bool, code int) {
	a := r.a
	switch m.Method {
	case "initialize":
		a.Reply(m, fakeagent.InitResult(map[string]any{
			"sessionCapabilities": map[string]any{"close": map[string]any{}},
		}))
	case "session/new":
		a.Reply(m, map[string]any{"sessionId": SessionID})
	case "session/close":
		a.Reply(m, map[string]any{})
	case "session/prompt":
		return r.prompt(m)
	case "session/cancel":
		r.rec.Trace("read session/cancel with no prompt open")
	case "":
		// An answer to a request the runtime did not wait for.
	default:
		if m.ID != nil {
			a.ReplyError(m, -32601, "Method not found", nil)
		}
	}
	return false, 0
}

// promptTurn is the plan's turn a session/prompt's params name: its first
// content block's text is "turn N". -1 when they name none. The params are
// read by gen's decoder, with exact member names, as any ACP agent reads
// them.
func promptTurn(params []byte) int {
	var p acp.PromptRequest
	if p.UnmarshalJSON(params) != nil || len(p.Prompt) == 0 {
		return -1
	}
	text, ok := p.Prompt[0].(*acp.ContentBlockText)
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimPrefix(text.Text, "turn "))
	if err != nil {
		return -1
	}
	return n
}

// prompt runs the turn the prompt names.
func (r *runner) prompt(m fakeagent.Msg) (exit bool, code int) {
	i := promptTurn(m.Params)
	r.rec.Trace("read prompt %d", i)
	r.cancelled = false
	if i < 0 || i >= len(r.p.Turns) {
		r.answer(m, "end_turn")
		return false, 0
	}
	t := r.p.Turns[i]
	// A runtime takes a moment before it answers, and reads what arrived
	// right behind the prompt: a cancel there is this prompt's. (In a
	// synctest bubble the moment lasts until everything else waits.)
	r.delay(Settle)
	for _, s := range t.Pre {
		r.poll()
		if r.cancelled && t.End.Kind != EndAwaitCancel {
			// A cooperative runtime stops at a cancel and says so.
			r.answer(m, "cancelled")
			return r.post(t)
		}
		r.step(s)
	}
	r.poll()
	e := t.End
	switch e.Kind {
	case EndAnswer:
		r.answerUnlessCancelled(m, e.StopReason)
	case EndError:
		r.rec.Trace("answer error %d", e.Code)
		r.a.ReplyError(m, e.Code, "the runtime failed", nil)
	case EndUndecodable:
		r.rec.Trace("answer undecodable")
		r.a.Reply(m, map[string]any{"stopReason": 42})
	case EndPerson:
		if e.React == ReactAnswerAtOnce {
			r.a.Hold()
			r.request(e.Person)
			r.answer(m, "end_turn")
			r.a.Release()
			break
		}
		r.request(e.Person)
		r.react(m, e.React)
	case EndAwaitCancel:
		r.react(m, e.React)
	case EndExit:
		r.rec.Trace("exit %d", e.ExitCode)
		r.writeStderr(e.Stderr)
		return true, e.ExitCode
	case EndOversize:
		r.rec.Trace("oversize line")
		r.a.WriteLine(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 11<<20) + `"}}`)
		r.answerUnlessCancelled(m, "end_turn")
	}
	return r.post(t)
}

func (r *runner) post(t Turn) (exit bool, code int) {
	for _, s := range t.Post {
		r.step(s)
	}
	return false, 0
}

// react waits for the adapter's session/cancel, then answers as React
// says.
func (r *runner) react(m fakeagent.Msg, how React) {
	if !r.cancelled && !r.await(func(m fakeagent.Msg) bool { return m.Method == "session/cancel" }) {
		return
	}
	r.rec.Trace("read the awaited session/cancel")
	switch how {
	case ReactCancelled:
		r.answer(m, "cancelled")
	case ReactEndTurn:
		r.answer(m, "end_turn")
	default:
		r.rec.Trace("never answer")
	}
}

func (r *runner) answerUnlessCancelled(m fakeagent.Msg, reason string) {
	if r.cancelled {
		reason = "cancelled"
	}
	r.answer(m, reason)
}

func (r *runner) answer(m fakeagent.Msg, reason string) {
	r.rec.Trace("answer %s", reason)
	r.a.Reply(m, map[string]any{"stopReason": reason})
}

// request sends a request that only a person could answer (StepPerson).
func (r *runner) request(s Step) {
	if s.Elicit {
		r.a.Request("elicitation/create", map[string]any{"message": "which one?"})
		return
	}
	r.a.Request("session/request_permission", map[string]any{
		"sessionId": SessionID, "toolCall": map[string]any{"toolCallId": "t"},
		"options": []map[string]any{{"optionId": "yes", "name": "allow", "kind": "allow_once"}},
	})
}

// step writes one step.
func (r *runner) step(s Step) {
	a := r.a
	switch s.Kind {
	case StepChunks:
		r.rec.Wrote(s.Seqs...)
		a.Hold()
		for _, seq := range s.Seqs {
			r.chunk("m"+strconv.Itoa(s.Seqs[0]), seq)
		}
		a.Release()
	case StepFlood:
		r.rec.Wrote(s.Seqs...)
		a.Hold()
		for _, seq := range s.Seqs {
			r.chunk("f"+strconv.Itoa(seq), seq)
		}
		a.Release()
	case StepTool:
		seq := s.Seqs[0]
		id := "t" + strconv.Itoa(seq)
		status := "completed"
		if s.Failed {
			status = "failed"
		}
		r.rec.Wrote(seq)
		a.Hold()
		a.Update(SessionID, `{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"start","kind":"edit"}`)
		a.Update(SessionID, `{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","status":"`+status+`","title":"s`+strconv.Itoa(seq)+`"}`)
		a.Release()
	case StepThought:
		a.Update(SessionID, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`)
	case StepPlan:
		a.Update(SessionID, `{"sessionUpdate":"plan","entries":[]}`)
	case StepUsage:
		a.Update(SessionID, `{"sessionUpdate":"usage_update","used":10,"size":100}`)
	case StepCommands:
		a.Update(SessionID, `{"sessionUpdate":"available_commands_update","availableCommands":[]}`)
	case StepRefusable:
		id := a.Request("session/request_permission", map[string]any{
			"sessionId": SessionID, "toolCall": map[string]any{"toolCallId": "t"},
			"options": []map[string]any{
				{"optionId": "yes", "name": "allow", "kind": "allow_once"},
				{"optionId": "no", "name": "reject", "kind": "reject_once"},
			},
		})
		if s.Await {
			r.awaitAnswer(id)
		}
	case StepPerson:
		r.request(s)
	case StepUnknown:
		id := a.Request("fs/read_text_file", map[string]any{"sessionId": SessionID, "path": "/etc/hostname"})
		if s.Await {
			r.awaitAnswer(id)
		}
	case StepGarbage:
		a.WriteLine("{this is not json")
	case StepBadUpdate:
		a.Notify("session/update", map[string]any{"sessionId": SessionID, "update": 7})
	case StepMystery:
		a.Update(SessionID, `{"sessionUpdate":"mystery_update","x":1}`)
	case StepForeign:
		a.Update("someone-else", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"not yours"}}`)
	case StepNullID:
		a.WriteLine(`{"jsonrpc":"2.0","id":null,"method":"session/update","params":{"sessionId":"` + SessionID + `","update":{"sessionUpdate":"plan","entries":[]}}}`)
	case StepStderr:
		r.writeStderr(s.Stderr)
	case StepDelay:
		r.delay(s.Delay)
	}
}

// delay pauses the runtime for d, or until it is stopped.
func (r *runner) delay(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.stop:
	}
}

// chunk writes one text chunk carrying seq.
func (r *runner) chunk(messageID string, seq int) {
	r.a.Update(SessionID, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"s`+strconv.Itoa(seq)+` "},"messageId":"`+messageID+`"}`)
}

// awaitAnswer waits for the answer to the runtime's request id.
func (r *runner) awaitAnswer(id int) {
	want := strconv.Itoa(id)
	r.await(func(m fakeagent.Msg) bool { return m.Method == "" && string(m.ID) == want })
}

// writeStderr writes lines to stderr, the secret where they say.
func (r *runner) writeStderr(lines []StderrLine) {
	for i, l := range lines {
		text := "hostile: note " + strconv.Itoa(i)
		if l.Secret {
			s := r.secret
			if l.Escape && len(s) > 2 {
				s = s[:len(s)/2] + "\x1b[1m" + s[len(s)/2:]
			}
			text = "hostile: echo " + s + " done"
			if l.Straddle > 0 {
				n := max(MaxLineBytes-min(l.Straddle, len(s)-1), 0)
				text = strings.Repeat("x", n) + s + " and more after the cut"
			}
		}
		_, _ = io.WriteString(r.stderr, text+"\n")
	}
}
