// Package fakeagent is a scripted Agent Client Protocol runtime for the
// adapter's tests: the faults a cooperative agent never produces (early
// exits, garbage, oversize lines, ignored signals, descendants holding
// stdout, answers racing a cancel) are written as small Go scenarios that
// run in a re-executed test binary and speak NDJSON over real pipes.
//
// A test package calls Main from its TestMain with its scenarios; a command
// line whose first argument is "fakeagent:<name>" then runs that scenario
// instead of the tests.
package fakeagent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/normalize"
)

// Scenario is one scripted runtime behaviour.
type Scenario func(a *Agent)

const (
	scenarioPrefix  = "fakeagent:"
	holderPrefix    = "fakeagent-holder:"
	commandPrefix   = "fakeagent-command:"
	daemonizePrefix = "fakeagent-daemonize:"
)

// Main runs the scenario named by os.Args[1] when the process was started as
// a fake agent and exits; otherwise it returns and the tests run. The
// remaining arguments are available to the scenario as Agent.Args.
func Main(scenarios map[string]Scenario) {
	if len(os.Args) < 2 {
		return
	}
	arg := os.Args[1]
	switch {
	case strings.HasPrefix(arg, holderPrefix):
		hold(strings.TrimPrefix(arg, holderPrefix))
		os.Exit(0)
	case strings.HasPrefix(arg, commandPrefix): // a tool command with a child
		socketPath := strings.TrimPrefix(arg, commandPrefix)
		if startHolder(socketPath, nil) != nil {
			os.Exit(5)
		}
		hold(socketPath)
		os.Exit(0)
	case strings.HasPrefix(arg, daemonizePrefix): // a double fork's first half
		if startHolder(strings.TrimPrefix(arg, daemonizePrefix), holderAttr(true)) != nil {
			os.Exit(5)
		}
		os.Exit(0)
	case strings.HasPrefix(arg, scenarioPrefix):
		name := strings.TrimPrefix(arg, scenarioPrefix)
		s, ok := scenarios[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "fakeagent: no scenario %q\n", name)
			os.Exit(2)
		}
		a := New(os.Stdin, os.Stdout)
		a.Args = os.Args[2:]
		s(a)
		os.Exit(0)
	}
}

// Command returns the agent.command line that runs scenario name from the
// current test binary, followed by args.
func Command(name string, args ...string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return strings.Join(append([]string{exe, scenarioPrefix + name}, args...), " ")
}

// Msg is one inbound JSON-RPC message as the agent read it (readMsg): the
// raw values of its members, nil when absent.
type Msg struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError // nil when absent or null
	// Raw is the line as read.
	Raw []byte
}

// Agent is the scripted side of one connection. Writes are serialised so a
// scenario may write from several goroutines.
type Agent struct {
	// Args are the command-line arguments after the scenario name.
	Args []string
	// Exit ends the runtime with a status: Fail and a failed write call
	// it. Nil means os.Exit; an agent running inside the test process
	// (over pipes, in place of a child) sets its own.
	Exit   func(code int)
	in     *bufio.Reader
	out    io.Writer
	mu     sync.Mutex
	nextID int
	held   *bytes.Buffer // writes kept for one Release
}

// New returns an Agent reading r and writing w.
func New(r io.Reader, w io.Writer) *Agent {
	return &Agent{in: bufio.NewReaderSize(r, 1<<16), out: w}
}

// Fail reports a script violation on stderr and exits with status 3, which
// the test sees as an early exit carrying this text.
func (a *Agent) Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fakeagent: "+format+"\n", args...)
	a.exit(3)
}

// exit ends the runtime through Exit, or os.Exit without one.
func (a *Agent) exit(code int) {
	if a.Exit != nil {
		a.Exit(code)
		return
	}
	os.Exit(code)
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Read returns the next message; io.EOF when the client closed stdin.
func (a *Agent) Read() (Msg, error) {
	line, err := a.in.ReadBytes('\n')
	if len(bytes.TrimSpace(line)) == 0 && err != nil {
		return Msg{}, err
	}
	m, err := readMsg(line)
	if err != nil {
		return Msg{Raw: line}, fmt.Errorf("fakeagent: bad line %q: %w", line, err)
	}
	return m, nil
}

// errNotMessage is the cause of a line that is no JSON-RPC message.
var errNotMessage = errors.New("not a JSON-RPC message")

// readMsg reads line's members by their exact names, as acpsdk and gen read
// them (normalize.Member): "ID" or "METHOD" is another member, so a test
// cannot pass on a line the adapter wrote with a case-folded name.
func readMsg(line []byte) (Msg, error) {
	m := Msg{Raw: line}
	e, ok := normalize.ReadEnvelope(line)
	if !ok {
		return m, errNotMessage
	}
	m.ID, m.Method, m.Params, m.Result = e.ID, e.Method, e.Params, e.Result
	if e.Error != nil {
		m.Error = &RPCError{}
		if code, ok := normalize.Member(e.Error, "code"); ok {
			if err := json.Unmarshal(code, &m.Error.Code); err != nil {
				return m, fmt.Errorf("%w: its error code: %w", errNotMessage, err)
			}
		}
		m.Error.Message, _ = normalize.StringMember(e.Error, "message")
	}
	return m, nil
}

// Expect reads the next message and fails the script unless it is method.
func (a *Agent) Expect(method string) Msg {
	m, err := a.Read()
	if err != nil {
		a.Fail("waiting for %s: %v", method, err)
	}
	if m.Method != method {
		a.Fail("got %q, want %s: %s", m.Method, method, m.Raw)
	}
	return m
}

// WaitEOF reads and discards messages until stdin ends.
func (a *Agent) WaitEOF() {
	for {
		if _, err := a.Read(); err == io.EOF {
			return
		}
	}
}

// Reply answers request m with result.
func (a *Agent) Reply(m Msg, result any) {
	a.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// ReplyError answers request m with an error; data is omitted when nil.
func (a *Agent) ReplyError(m Msg, code int, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	a.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": e})
}

// Notify sends a notification.
func (a *Agent) Notify(method string, params any) {
	a.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Update sends session/update for sessionID with a raw update object.
func (a *Agent) Update(sessionID, update string) {
	a.Notify("session/update", map[string]any{"sessionId": sessionID, "update": json.RawMessage(update)})
}

// Request sends a request with a fresh integer id and returns the id.
func (a *Agent) Request(method string, params any) int {
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	a.mu.Unlock()
	a.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id
}

// WriteLine writes raw followed by a newline, for garbage and hand-built lines.
func (a *Agent) WriteLine(raw string) {
	a.mu.Lock()
	if a.held != nil {
		a.held.WriteString(raw + "\n")
		a.mu.Unlock()
		return
	}
	_, err := io.WriteString(a.out, raw+"\n")
	a.mu.Unlock()
	if err != nil {
		a.exit(4)
	}
}

// Hold keeps every line written from now on until Release, which writes them
// all in one write, so they reach the reader together: tests of wire order
// use it to leave nothing to the timing of separate writes.
func (a *Agent) Hold() {
	a.mu.Lock()
	a.held = new(bytes.Buffer)
	a.mu.Unlock()
}

// Release writes what was held since Hold in one write; without Hold it
// does nothing.
func (a *Agent) Release() {
	a.mu.Lock()
	b := a.held
	a.held = nil
	if b == nil || b.Len() == 0 {
		a.mu.Unlock()
		return
	}
	_, err := a.out.Write(b.Bytes())
	a.mu.Unlock()
	if err != nil {
		a.exit(4)
	}
}

func (a *Agent) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		a.Fail("marshal: %v", err)
	}
	a.WriteLine(string(b))
}

// InitResult is a conventional initialize result; caps is merged into
// agentCapabilities.
func InitResult(caps map[string]any) map[string]any {
	ac := map[string]any{}
	for k, v := range caps {
		ac[k] = v
	}
	return map[string]any{
		"protocolVersion":   1,
		"agentCapabilities": ac,
		"agentInfo":         map[string]any{"name": "fakeagent", "version": "1.0.0"},
	}
}

// Handshake answers initialize with result and session/new with sessionID,
// returning the session/new request.
func (a *Agent) Handshake(result any, sessionID string) Msg {
	a.Reply(a.Expect("initialize"), result)
	m := a.Expect("session/new")
	a.Reply(m, map[string]any{"sessionId": sessionID})
	return m
}

// IgnoreTerm makes the process ignore SIGTERM, like runtimes that only die
// by SIGKILL.
func IgnoreTerm() { signal.Ignore(syscall.SIGTERM) }

// Hang blocks forever (until a signal ends the process).
func Hang() { select {} }

// SpawnHolder starts a descendant that inherits this process's stdout and
// stderr and keeps them open until the unix socket at socketPath closes.
// With detach it moves into its own session (outside the process group, so
// the group kill does not reach it, TD-12); without, it stays in the group.
// It returns once the descendant has connected, so it holds stdout by then.
func SpawnHolder(socketPath string, detach bool) {
	exe, err := os.Executable()
	if err != nil {
		os.Exit(5)
	}
	cmd := exec.Command(exe, holderPrefix+socketPath)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		os.Exit(5)
	}
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = holderAttr(detach)
	if err := cmd.Start(); err != nil {
		os.Exit(5)
	}
	w.Close()
	// The holder closes fd 3 once connected.
	io.Copy(io.Discard, r)
	r.Close()
}

// SpawnTree leaves behind what real runtimes leave (TD-15): a tool command
// in a session of its own (on Windows, a process group) with a child, and
// a daemon that double-forked away — its parent exits at once, so init
// adopts it. Each of the three connects to the unix socket at socketPath,
// as SpawnHolder's do, and holds until it closes; none holds the runtime's
// stdio. It returns once the daemon's parent has exited.
func SpawnTree(socketPath string) {
	exe, err := os.Executable()
	if err != nil {
		os.Exit(5)
	}
	command := exec.Command(exe, commandPrefix+socketPath)
	command.SysProcAttr = holderAttr(true)
	if err := command.Start(); err != nil {
		os.Exit(5)
	}
	if err := exec.Command(exe, daemonizePrefix+socketPath).Run(); err != nil {
		os.Exit(5)
	}
}

// startHolder starts a holder with attr and its stdio on the null device,
// and does not wait for it.
func startHolder(socketPath string, attr *syscall.SysProcAttr) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The holder closes its fd 3 once connected; give it one to close.
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.Command(exe, holderPrefix+socketPath)
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = []*os.File{null}
	return cmd.Start()
}

// hold is the descendant: connect, say so, and block until the socket ends.
func hold(socketPath string) {
	c, err := net.Dial("unix", socketPath)
	if f := os.NewFile(3, "ready"); f != nil {
		f.Close()
	}
	if err != nil {
		return
	}
	defer c.Close()
	fmt.Fprintf(c, "%d\n", os.Getpid())
	io.Copy(io.Discard, c)
}
