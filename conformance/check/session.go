package check

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// maxLine bounds one line read from the agent. It is far above the SDK's
// 10 MiB default because the grader must see, not drop, oversize lines.
const maxLine = 64 << 20

// ErrExited is returned by a wait that ended because the agent's stdout
// reached end of stream before the awaited message arrived.
var ErrExited = errors.New("agent closed its stdout")

// ErrTimeout is returned by a wait that outlived the configured timeout.
var ErrTimeout = errors.New("timed out waiting for the agent")

// Message is one line read from the agent, classified. acpcheck keeps its
// own view of the wire rather than an SDK's because it must see exactly what
// the agent sent: a missing id, a result and an error together, a line that
// is not JSON at all.
type Message struct {
	// Seq is the message's position among lines read from the agent.
	Seq int
	// Raw is the line as read.
	Raw []byte
	// Invalid is set when the line is not a JSON object.
	Invalid bool
	// HasID is set when the object has an "id" member (even null).
	HasID bool
	// ID is the raw id ("null" when present as null).
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *WireError
}

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool {
	return !m.Invalid && m.Method == "" && (m.Result != nil || m.Error != nil)
}

// IsNotification reports whether m is a notification from the agent.
func (m *Message) IsNotification() bool { return !m.Invalid && m.Method != "" && !m.HasID }

// IsRequest reports whether m is a request from the agent.
func (m *Message) IsRequest() bool { return !m.Invalid && m.Method != "" && m.HasID }

// WireError is a JSON-RPC error object as received.
type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error renders the code and message.
func (e *WireError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// Target says what to launch, or where to connect.
type Target struct {
	// Argv is the program and its arguments.
	Argv []string
	// URL, when set, is an agent served over the network (http://,
	// https://, ws://, wss:// or tcp://; see Dial): each check connects
	// to it instead of launching Argv.
	URL string
	// Dir is the working directory (and the cwd sent in session/new).
	Dir string
	// Env, when non-nil, replaces the inherited environment.
	Env []string
	// Secrets are values of Env the user handed the agent (credentials):
	// they are masked wherever they occur in transcripts and reasons.
	Secrets []string
}

// Session is one launched agent process and acpcheck's raw JSON-RPC view of
// it. A check drives it; the runner owns its lifetime.
type Session struct {
	// Timeout bounds every wait for a response.
	Timeout time.Duration
	// ExitBound bounds waits for the process to exit.
	ExitBound time.Duration
	// Cwd is the absolute working directory sent in session requests.
	Cwd string

	tr     *transcript
	cmd    *exec.Cmd // nil for an agent served at a URL
	url    string    // the URL of an agent served over the network
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr io.ReadCloser // nil for an agent served at a URL

	writeMu sync.Mutex
	nextID  int64

	mu      sync.Mutex
	msgs    []*Message
	changed chan struct{} // closed and replaced whenever msgs grows or eof flips
	eof     bool

	exited   chan struct{} // closed when the process has been reaped
	exitErr  error
	exitedAt time.Duration

	helpers sync.WaitGroup // reader, stderr collector, answerers, reaper

	// peer is what the last initialize answer named (agentInfo).
	peer Peer
	// authMethod, when set, is authenticated with before session/new.
	authMethod    string
	authenticated bool
	// advertised collects what the agent advertises, for the grading.
	advertised *advertised
	// holdPermissions leaves session/request_permission unanswered for the
	// check to answer (Reply); guarded by mu.
	holdPermissions bool

	// share is set on a process shared between consecutive checks
	// (Config.ShareProcess); nil for a process of one check.
	share *shared
	// interrupted is set once Interrupt was called: the process cannot
	// serve another check.
	interrupted atomic.Bool
}

// shared is the state of an agent process that serves several checks in
// turn, each with its own sessions. Only the grading's goroutine touches
// it.
type shared struct {
	// first is the check that launched and initialized the process.
	first string
	// handshake is the first check's initialize answer, which every later
	// check's Initialize returns instead of initializing again.
	handshake *Handshake
	// discard makes Close end the process instead of keeping it.
	discard bool
	// closed is set once the process was ended.
	closed bool
}

// Launch starts the agent described by t.
func Launch(t Target, timeout, exitBound time.Duration) (*Session, error) {
	if len(t.Argv) == 0 {
		return nil, errors.New("check: empty command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("check: stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("check: stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("check: stderr pipe: %w", err)
	}
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = t.Env
	// Hand the child real files so exec starts no copying goroutines and
	// Wait returns when the process exits, even if a descendant keeps
	// stdout open.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	isolate(cmd)
	s := &Session{
		Timeout:   timeout,
		ExitBound: exitBound,
		Cwd:       t.Dir,
		tr:        newTranscript(newMasker(t.Secrets)),
		cmd:       cmd,
		stdin:     inW,
		stdout:    outR,
		stderr:    errR,
		changed:   make(chan struct{}),
		exited:    make(chan struct{}),
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("check: start %q: %w", t.Argv[0], err)
	}
	closeAll(inR, outW, errW)
	s.tr.notef("launched pid %d: %q", cmd.Process.Pid, t.Argv)
	s.helpers.Add(3)
	go s.readStdout()
	go s.readStderr()
	go s.reap()
	return s, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// PID is the agent's process id; 0 for an agent served at a URL.
func (s *Session) PID() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Transcript returns what the session has seen so far.
func (s *Session) Transcript() []Line { return s.tr.snapshot() }

// Notef adds a note to the transcript.
func (s *Session) Notef(format string, args ...any) { s.tr.notef(format, args...) }

// Peer is the agent as its last initialize answer named it.
func (s *Session) Peer() Peer { return s.peer }

// Interrupt notes why and closes the agent's stdin, which unblocks a
// write to an agent that stopped reading; every wait honours the check's
// context.
func (s *Session) Interrupt(note string) {
	s.interrupted.Store(true)
	s.tr.notef("%s", note)
	s.CloseStdin()
}

func (s *Session) reap() {
	defer s.helpers.Done()
	err := s.cmd.Wait()
	s.exitErr = err
	s.exitedAt = s.tr.since()
	if err != nil {
		s.tr.notef("process exited: %v", err)
	} else {
		s.tr.notef("process exited: status 0")
	}
	close(s.exited)
}

func (s *Session) readStderr() {
	defer s.helpers.Done()
	sc := bufio.NewScanner(s.stderr)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		s.tr.add(DirStderr, sc.Bytes())
	}
}

func (s *Session) readStdout() {
	defer s.helpers.Done()
	r := bufio.NewReaderSize(s.stdout, 64<<10)
	var buf []byte
	skipping := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 && !skipping {
			buf = append(buf, chunk...)
			if len(buf) > maxLine {
				s.tr.notef("line longer than %d bytes; skipped", maxLine)
				s.append(&Message{Raw: []byte("(oversize line)"), Invalid: true})
				buf, skipping = buf[:0], true
			}
		}
		switch {
		case err == nil:
			if !skipping {
				s.receive(bytes.TrimRight(buf, "\r\n"))
			}
			buf, skipping = buf[:0], false
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if len(buf) > 0 && !skipping {
				s.receive(buf)
			}
			s.mu.Lock()
			s.eof = true
			s.broadcastLocked()
			s.mu.Unlock()
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				s.tr.notef("reading stdout: %v", err)
			} else {
				s.tr.notef("stdout reached end of stream")
			}
			return
		}
	}
}

// receive classifies one line and answers agent requests the way an
// unattended client does.
func (s *Session) receive(line []byte) {
	raw := bytes.Clone(line)
	s.tr.add(DirRecv, raw)
	m := parseMessage(raw)
	s.append(m)
	if m.IsRequest() {
		if m.Method == gen.MethodSessionRequestPermission && s.holding() {
			return // the check answers it (Reply)
		}
		s.helpers.Add(1)
		go func() {
			defer s.helpers.Done()
			s.answer(m)
		}()
	}
}

func parseMessage(raw []byte) *Message {
	m := &Message{Raw: raw}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		m.Invalid = true
		return m
	}
	if id, ok := obj["id"]; ok {
		m.HasID, m.ID = true, id
	}
	if v, ok := obj["method"]; ok {
		if json.Unmarshal(v, &m.Method) != nil || m.Method == "" {
			m.Invalid = true
		}
	}
	m.Params = obj["params"]
	m.Result = obj["result"]
	if v, ok := obj["error"]; ok {
		var e WireError
		if json.Unmarshal(v, &e) != nil {
			m.Invalid = true
		} else {
			m.Error = &e
		}
	}
	return m
}

func (s *Session) append(m *Message) {
	s.mu.Lock()
	m.Seq = len(s.msgs)
	s.msgs = append(s.msgs, m)
	s.broadcastLocked()
	s.mu.Unlock()
}

func (s *Session) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// HoldPermissions leaves every later session/request_permission
// unanswered: the check finds it among the messages and answers it with
// Reply, when it chooses.
func (s *Session) HoldPermissions() {
	s.mu.Lock()
	s.holdPermissions = true
	s.mu.Unlock()
}

func (s *Session) holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holdPermissions
}

// Reply answers the agent's request m with result.
func (s *Session) Reply(m *Message, result any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	if err != nil {
		return fmt.Errorf("check: encoding the answer to %s: %w", m.Method, err)
	}
	return s.WriteRaw(b)
}

// answer replies to a request the agent made: a permission request gets its
// first refusing option (or the cancelled outcome when none refuses), every
// other method gets -32601, as an unattended client would do.
func (s *Session) answer(m *Message) {
	var reply map[string]any
	if m.Method == gen.MethodSessionRequestPermission {
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		outcome := map[string]any{"outcome": gen.RequestPermissionOutcomeCancelledTag}
		if json.Unmarshal(m.Params, &p) == nil {
			for _, kind := range []gen.PermissionOptionKind{gen.PermissionOptionKindRejectOnce, gen.PermissionOptionKindRejectAlways} {
				if id, ok := firstOption(p.Options, string(kind)); ok {
					outcome = map[string]any{"outcome": gen.RequestPermissionOutcomeSelectedTag, "optionId": id}
					break
				}
			}
		}
		reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": outcome}}
	} else {
		reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}}
	}
	b, err := json.Marshal(reply)
	if err != nil {
		s.tr.notef("encoding the answer to %s: %v", m.Method, err)
		return
	}
	_ = s.WriteRaw(b)
}

func firstOption(opts []struct {
	OptionID string `json:"optionId"`
	Kind     string `json:"kind"`
}, kind string) (string, bool) {
	for _, o := range opts {
		if o.Kind == kind {
			return o.OptionID, true
		}
	}
	return "", false
}

// WriteRaw writes line plus a newline to the agent's stdin, as is.
func (s *Session) WriteRaw(line []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.tr.add(DirSend, line)
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := s.stdin.Write(buf); err != nil {
		s.tr.notef("write failed: %v", err)
		return fmt.Errorf("check: writing to the agent: %w", err)
	}
	return nil
}

// Send writes a request and returns its id without waiting.
func (s *Session) Send(method string, params any) (int64, error) {
	s.writeMu.Lock()
	s.nextID++
	id := s.nextID
	s.writeMu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return 0, fmt.Errorf("check: encoding %s: %w", method, err)
	}
	return id, s.WriteRaw(b)
}

// Notify writes a notification.
func (s *Session) Notify(method string, params any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("check: encoding %s: %w", method, err)
	}
	return s.WriteRaw(b)
}

// Call sends a request and waits, bounded by Timeout, for its response.
func (s *Session) Call(ctx context.Context, method string, params any) (*Message, error) {
	id, err := s.Send(method, params)
	if err != nil {
		return nil, err
	}
	return s.Await(ctx, id)
}

// Await waits for the response to request id.
func (s *Session) Await(ctx context.Context, id int64) (*Message, error) {
	want := strconv.FormatInt(id, 10)
	m, err := s.WaitFor(ctx, 0, func(m *Message) bool {
		return m.IsResponse() && string(bytes.TrimSpace(m.ID)) == want
	})
	if err != nil {
		return nil, fmt.Errorf("response to request %d: %w", id, err)
	}
	return m, nil
}

// Mark returns the sequence number the next received message will get, so
// a check can later ask what arrived after this point.
func (s *Session) Mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// Since returns the messages received from sequence number from on.
func (s *Session) Since(from int) []*Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from > len(s.msgs) {
		return nil
	}
	return append([]*Message(nil), s.msgs[from:]...)
}

// WaitFor waits until a message with sequence number >= from satisfies
// match, the agent's stdout ends, ctx ends or Timeout passes.
func (s *Session) WaitFor(ctx context.Context, from int, match func(*Message) bool) (*Message, error) {
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	next := from
	for {
		s.mu.Lock()
		for ; next < len(s.msgs); next++ {
			if m := s.msgs[next]; match(m) {
				s.mu.Unlock()
				return m, nil
			}
		}
		eof, changed := s.eof, s.changed
		s.mu.Unlock()
		if eof {
			return nil, ErrExited
		}
		select {
		case <-changed:
		case <-timer.C:
			s.tr.notef("gave up waiting after %v", s.Timeout)
			return nil, ErrTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// CloseStdin closes the agent's stdin. It does not wait for a write in
// progress: closing the pipe is what unblocks a write to an agent that
// stopped reading.
func (s *Session) CloseStdin() {
	s.tr.notef("closed the agent's stdin")
	_ = s.stdin.Close()
}

// Terminate sends the graceful termination signal to the agent's group.
func (s *Session) Terminate() error {
	if s.cmd == nil {
		return errors.New("check: an agent served at a URL has no process to signal")
	}
	s.tr.notef("sent %s to the process group", signalName)
	return terminate(s.PID())
}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (s *Session) WaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		s.tr.notef("process still running after %v", d)
		return false
	}
}

// Exited reports whether the process has exited.
func (s *Session) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Shared reports whether the process serves several checks in turn
// (Config.ShareProcess).
func (s *Session) Shared() bool { return s.share != nil }

// Spoiled reports whether the process can serve no further check: it
// exited, its stdout ended, or a check was interrupted.
func (s *Session) Spoiled() bool {
	s.mu.Lock()
	eof := s.eof
	s.mu.Unlock()
	return eof || s.Exited() || s.interrupted.Load()
}

// Untouched reports whether the check the shared process is leased to
// has written nothing to it (its transcript holds no line sent).
func (s *Session) Untouched() bool {
	if s.share == nil {
		return false
	}
	return !slices.ContainsFunc(s.tr.snapshot(), func(l Line) bool { return l.Dir == DirSend })
}

// Discard makes Close end a shared process instead of keeping it for the
// next check.
func (s *Session) Discard() {
	if s.share != nil {
		s.share.discard = true
	}
}

// lease hands a shared process to the next check, id: what the last check
// left (its transcript, messages, held permissions) is dropped, so the
// check sees only what it causes, as on a fresh process.
func (s *Session) lease(id string) {
	s.tr.restart()
	s.mu.Lock()
	s.msgs, s.holdPermissions = nil, false
	s.broadcastLocked()
	s.mu.Unlock()
	s.tr.notef("shared process pid %d, initialized by %s (leased to %s)", s.PID(), s.share.first, id)
}

// Close ends the session: it closes stdin, kills the process group, reaps
// the process and stops every helper goroutine. A descendant that left the
// group and still holds stdout cannot delay Close: the read end is closed.
// A shared process is kept for the next check instead, unless it was
// discarded or is spoiled.
func (s *Session) Close() {
	if s.share != nil {
		if !s.share.discard && !s.Spoiled() {
			return
		}
		if s.share.closed {
			return
		}
		s.share.closed = true
	}
	_ = s.stdin.Close() // also unblocks a write the agent never reads
	if s.cmd == nil {
		// An agent served at a URL: closing the connection ends it.
		_ = s.stdout.Close()
		<-s.exited
		s.helpers.Wait()
		return
	}
	killGroup(s.PID())
	<-s.exited
	_ = s.stdout.Close()
	_ = s.stderr.Close()
	s.helpers.Wait()
}
