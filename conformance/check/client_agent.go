package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/conformance/internal/scenario"
)

// AgentWindDown is how long the scenario agent takes to exit once its
// stdin ends, as an agent that tidies up would. A client that exits
// sooner than that after closing the agent's stdin leaves it running.
const AgentWindDown = 300 * time.Millisecond

// ScenarioAgentName is the name the scenario agent gives in its
// initialize answer (agentInfo).
const ScenarioAgentName = "acpcheck-scenario-agent"

// AgentConn is one scenario agent the graded client started, seen from the
// grader: the lines the client wrote to it as messages, what the agent
// process reported (its stdin ending, signals, its exit), and the means to
// write to the client as the agent.
type AgentConn struct {
	run   *ClientRun
	n     int
	rc    *relayConn
	hello scenario.Hello

	writeMu sync.Mutex
	nextID  int64

	// Guarded by run.mu.
	msgs       []*Message
	stdinEnded bool
	stdinEndAt time.Duration
	signals    []string
	exitCode   *int
	closed     bool
	closedAt   time.Duration
	// keepAlive, set by a scenario, stops the agent from exiting by itself
	// when its stdin ends.
	keepAlive bool
	// initialize is the client's initialize request, once it came; init
	// the result the agent answered it with.
	initialize *Message
	init       map[string]any
	sessions   int
	turns      int

	quit *time.Timer
	done chan struct{} // the reader has ended
}

// adopt takes a scenario agent that arrived for this run: its spawn goes
// in the transcript and a reader starts on its connection. Every agent
// after the first is served by the default scenario.
func (r *ClientRun) adopt(rc *relayConn) {
	r.mu.Lock()
	c := &AgentConn{run: r, n: len(r.conns) + 1, rc: rc, hello: rc.hello, done: make(chan struct{})}
	r.conns = append(r.conns, c)
	r.broadcastLocked()
	r.mu.Unlock()
	l := newLine(time.Since(r.tr.start), DirSpawn, fmt.Sprintf("the client started scenario agent %d, pid %d: %q", c.n, rc.hello.PID, rc.hello.Argv))
	l.event = &event{pid: strconv.Itoa(rc.hello.PID), argv: rc.hello.Argv}
	r.tr.addLine(l)
	r.helpers.Add(1)
	go c.read()
	if c.n > 1 {
		r.helpers.Add(1)
		go func() {
			defer r.helpers.Done()
			_ = c.serve(r.ctx, &Scenario{})
		}()
	}
}

// read turns the agent's frames into messages and events until its
// connection ends.
func (c *AgentConn) read() {
	r := c.run
	defer r.helpers.Done()
	defer close(c.done)
	var pending []byte
	skipping := false
	for {
		kind, data, err := scenario.ReadFrame(c.rc.r)
		if err != nil {
			break
		}
		switch kind {
		case scenario.KindStdin:
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					if !skipping {
						pending = append(pending, data...)
					}
					if len(pending) > maxLine {
						r.tr.notef("the client wrote a line longer than %d bytes; skipped", maxLine)
						pending, skipping = nil, true
					}
					break
				}
				if !skipping {
					c.receive(append(pending, data[:i]...))
				}
				pending, skipping, data = nil, false, data[i+1:]
			}
		case scenario.KindStdinEnd:
			if len(pending) > 0 && !skipping {
				c.receive(pending)
				pending = nil
			}
			c.stdinEnd(string(data))
		case scenario.KindSignal:
			r.tr.notef("scenario agent %d received %s", c.n, data)
			r.mu.Lock()
			c.signals = append(c.signals, string(data))
			r.broadcastLocked()
			r.mu.Unlock()
		case scenario.KindNote:
			r.tr.notef("scenario agent %d: %s", c.n, data)
		case scenario.KindExiting:
			code, _ := strconv.Atoi(string(data))
			l := newLine(time.Since(r.tr.start), DirExit, fmt.Sprintf("scenario agent %d exited: status %d", c.n, code))
			l.event = &event{status: fmt.Sprintf("exit status %d", code), code: code}
			r.tr.addLine(l)
			r.mu.Lock()
			c.exitCode = &code
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	c.closed, c.closedAt = true, time.Since(r.tr.start)
	if c.quit != nil {
		c.quit.Stop()
	}
	exited := c.exitCode != nil
	r.broadcastLocked()
	r.mu.Unlock()
	if !exited {
		r.tr.notef("scenario agent %d ended without exiting by itself (killed)", c.n)
	}
	_ = c.rc.conn.Close()
}

// receive records and classifies one line the client wrote.
func (c *AgentConn) receive(line []byte) {
	r := c.run
	r.tr.add(DirSend, line)
	m := parseMessage(bytes.Clone(bytes.TrimSuffix(line, []byte("\r"))))
	m.Raw = bytes.Clone(line)
	r.mu.Lock()
	m.Seq = len(c.msgs)
	c.msgs = append(c.msgs, m)
	if m.IsRequest() && m.Method == gen.MethodInitialize && c.initialize == nil {
		c.initialize = m
		r.peer = clientInfo(m.Params)
	}
	r.broadcastLocked()
	r.mu.Unlock()
}

// clientInfo reads initialize's clientInfo.
func clientInfo(params json.RawMessage) Peer {
	var p struct {
		ClientInfo Peer `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ClientInfo
}

// stdinEnd records the end of the agent's stdin and, unless the scenario
// keeps it alive, has it exit after AgentWindDown.
func (c *AgentConn) stdinEnd(reason string) {
	r := c.run
	if reason == "" {
		r.tr.notef("scenario agent %d: its stdin ended (the client closed it)", c.n)
	} else {
		r.tr.notef("scenario agent %d: reading its stdin failed: %s", c.n, reason)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c.stdinEnded, c.stdinEndAt = true, time.Since(r.tr.start)
	if !c.keepAlive && !c.closed {
		c.quit = time.AfterFunc(AgentWindDown, func() { c.exit(0) })
	}
	r.broadcastLocked()
}

// exit tells the agent to exit with code.
func (c *AgentConn) exit(code int) {
	_ = c.rc.send(scenario.KindExit, []byte(strconv.Itoa(code)))
}

// close tells the agent to exit, if it has not, and hangs up.
func (c *AgentConn) close() {
	c.exit(0)
	_ = c.rc.conn.Close()
	<-c.done
}

// Write writes one line (and its newline) to the client, as the agent. It
// fails with ErrAgentClosed when the agent is gone.
func (c *AgentConn) Write(line []byte) error {
	c.run.mu.Lock()
	closed := c.closed
	c.run.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: the agent is gone, so it cannot write to the client", ErrAgentClosed)
	}
	c.run.tr.add(DirRecv, line)
	buf := make([]byte, 0, len(line)+1)
	if err := c.rc.send(scenario.KindStdout, append(append(buf, line...), '\n')); err != nil {
		return fmt.Errorf("%w: writing to the client: %w", ErrAgentClosed, err)
	}
	return nil
}

// writeJSON writes v as one line.
func (c *AgentConn) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("check: encoding a message to the client: %w", err)
	}
	return c.Write(b)
}

// Send writes a request to the client and returns its id.
func (c *AgentConn) Send(method string, params any) (int64, error) {
	c.writeMu.Lock()
	c.nextID++
	id := c.nextID
	c.writeMu.Unlock()
	return id, c.writeJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// Notify writes a notification to the client.
func (c *AgentConn) Notify(method string, params any) error {
	return c.writeJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Reply answers the client's request m with result.
func (c *AgentConn) Reply(m *Message, result any) error {
	return c.writeJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// ReplyError answers the client's request m with an error.
func (c *AgentConn) ReplyError(m *Message, code int64, message string) error {
	return c.writeJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": code, "message": message}})
}

// Call sends a request and waits, bounded by the timeout, for the client's
// answer.
func (c *AgentConn) Call(ctx context.Context, method string, params any) (*Message, error) {
	from := c.Mark()
	id, err := c.Send(method, params)
	if err != nil {
		return nil, err
	}
	want := strconv.FormatInt(id, 10)
	m, err := c.WaitFor(ctx, from, func(m *Message) bool {
		return m.IsResponse() && string(bytes.TrimSpace(m.ID)) == want
	})
	if err != nil {
		return nil, fmt.Errorf("the answer to %s: %w", method, err)
	}
	return m, nil
}

// Mark is the position the next message from the client will get.
func (c *AgentConn) Mark() int {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return len(c.msgs)
}

// Messages returns what the client has sent so far.
func (c *AgentConn) Messages() []*Message {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return append([]*Message(nil), c.msgs...)
}

// ErrAgentClosed is returned by a wait that ended because the client ended
// the connection (the agent's stdin) before the awaited message arrived.
var ErrAgentClosed = errors.New("the client ended the connection")

// ErrClientTimeout is returned by a wait that outlived the timeout.
var ErrClientTimeout = errors.New("timed out waiting for the client")

// WaitFor waits until a message at or after position from matches, the
// client ends the connection, ctx ends or the timeout passes.
func (c *AgentConn) WaitFor(ctx context.Context, from int, match func(*Message) bool) (*Message, error) {
	var found *Message
	var ended, exited bool
	scan := func() bool {
		for _, m := range c.msgs[min(from, len(c.msgs)):] {
			if match(m) {
				found = m
				return true
			}
		}
		ended = c.stdinEnded || c.closed
		return false
	}
	c.run.wait(ctx, c.run.g.cfg.Timeout, func() bool {
		exited = c.run.exited
		return scan() || ended || exited
	})
	if found == nil && !ended && exited {
		// The client was reaped, but the last lines it wrote may still be
		// on their way through the agent's stdin: the end of that stdin
		// arrives after every line before it. A process the client left
		// behind may hold the stdin open, so this wait has the exit bound.
		c.run.wait(ctx, c.run.g.cfg.ExitBound, func() bool { return scan() || ended })
		ended = found == nil && ctx.Err() == nil
	}
	switch {
	case found != nil:
		return found, nil
	case ended:
		return nil, ErrAgentClosed
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	c.run.tr.notef("gave up waiting for the client after %v", c.run.g.cfg.Timeout)
	return nil, ErrClientTimeout
}

// Ended reports whether the connection has ended: the agent's stdin
// closed, or the agent gone, or the client exited.
func (c *AgentConn) Ended() bool {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return c.stdinEnded || c.closed || c.run.exited
}

// StdinEnded reports whether and when the agent's stdin ended.
func (c *AgentConn) StdinEnded() (bool, time.Duration) {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return c.stdinEnded, c.stdinEndAt
}

// Gone reports whether and when the agent's connection ended (it exited
// or was killed), and the exit code it reported (nil when killed).
func (c *AgentConn) Gone() (bool, time.Duration, *int) {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return c.closed, c.closedAt, c.exitCode
}

// Signals lists the signals the agent received, in order.
func (c *AgentConn) Signals() []string {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return append([]string(nil), c.signals...)
}

// Initialize is the client's initialize request (nil before it came) and
// the result the agent answered it with.
func (c *AgentConn) Initialize() (*Message, map[string]any) {
	c.run.mu.Lock()
	defer c.run.mu.Unlock()
	return c.initialize, c.init
}

// KeepAlive stops the agent from exiting by itself when its stdin ends.
func (c *AgentConn) KeepAlive() {
	c.run.mu.Lock()
	c.keepAlive = true
	c.run.mu.Unlock()
}
