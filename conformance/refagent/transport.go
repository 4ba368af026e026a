package refagent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// The agent runs on acpsdk's agent side: requests are decoded by the typed
// dispatch into the methods of typedAgent; this file adds, as the side's
// middleware, what a deliberately misbehaving agent needs on top — answers
// that bypass the typed layer, and lines that must follow a response
// immediately.

// errorf builds the wire error an agent method answers with.
func errorf(code int64, format string, args ...any) *acpsdk.Error {
	return &acpsdk.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// rawLine is written verbatim (the misbehaviours need lines no encoder
// would produce).
type rawLine []byte

func notification(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

func errorResponse(id json.RawMessage, e *acpsdk.Error) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": e}
}

var nullID = json.RawMessage("null")

// afterKey carries a request's afterLines through the typed dispatch.
type afterKey struct{}

// afterLines are lines a request handler wants written right after its
// response: armed once the tap sees the response go out, written by
// whichever comes first — the flusher goroutine or the next inbound
// message's handler (so a client reacting to the response always sees them
// first).
type afterLines struct {
	id    string // the request's id, compact JSON
	lines []any
	armed bool
}

// addAfter queues lines to follow the current request's response.
func addAfter(ctx context.Context, lines ...any) {
	if al, _ := ctx.Value(afterKey{}).(*afterLines); al != nil {
		al.lines = append(al.lines, lines...)
	}
}

// transport owns the agent side and the after-lines bookkeeping.
type transport struct {
	side *acpsdk.AgentSide
	conn *acpsdk.Conn // side.Conn(): raw writes, Flush, Done
	log  *slog.Logger

	ready chan struct{} // closed once side is set: handlers may run before

	flushMu sync.Mutex // serialises flushArmed's writes
	mu      sync.Mutex // guards pending; taken by the tap
	pending []*afterLines
	kick    chan struct{}
}

// write queues each message as one line: maps are encoded, rawLine is
// written as is.
func (t *transport) write(ctx context.Context, msgs ...any) error {
	for _, m := range msgs {
		var line []byte
		switch v := m.(type) {
		case rawLine:
			line = v
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("refagent: encoding a message: %w", err)
			}
			line = b
		}
		if err := t.conn.WriteRaw(ctx, line); err != nil {
			return err
		}
	}
	return nil
}

// tap arms the after-lines of a response as the writer sends it. It runs
// on the writer goroutine before the line is written, so it only marks and
// kicks; the writes happen elsewhere.
func (t *transport) tap(dir acpsdk.Direction, line []byte) {
	if dir != acpsdk.DirectionOut {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" || m.ID == nil {
		return
	}
	id := compact(m.ID)
	for _, al := range t.pending {
		if al.id == id {
			al.armed = true
			select {
			case t.kick <- struct{}{}:
			default:
			}
		}
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// flushArmed writes the after-lines whose response has gone out. The
// pending list is taken under mu and written under flushMu only: the tap
// takes mu on the writer goroutine, so holding mu across a write that waits
// for queue space would deadlock.
func (t *transport) flushArmed(ctx context.Context) {
	t.flushMu.Lock()
	defer t.flushMu.Unlock() // two flushers never interleave their lines
	t.mu.Lock()
	var ready []*afterLines
	keep := t.pending[:0]
	for _, al := range t.pending {
		if al.armed {
			ready = append(ready, al)
		} else {
			keep = append(keep, al)
		}
	}
	t.pending = keep
	t.mu.Unlock()
	for _, al := range ready {
		if err := t.write(ctx, al.lines...); err != nil {
			t.log.Warn("writing lines after a response", "error", err)
		}
	}
}

func (t *transport) flusher(ctx context.Context) {
	for {
		select {
		case <-t.kick:
			t.flushArmed(ctx)
		case <-ctx.Done():
			return
		}
	}
}

// intercept is the agent side's middleware: it runs around every inbound
// message and answers, before or instead of the typed dispatch (next),
// what the flags make the agent do differently.
func (a *Agent) intercept(ctx context.Context, req *acpsdk.Request, next acpsdk.HandlerFunc) (any, error) {
	<-a.t.ready
	a.handlerStarted()
	defer a.handlerEnded()
	a.t.flushArmed(ctx)
	// Turns also end when the agent stops (end of input), not only when
	// the connection cancels the handler.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(a.ctx, cancel)
	defer stop()

	if req.IsNotification() {
		if req.Method == gen.MethodSessionCancel {
			return next(ctx, req)
		}
		a.log.Info("ignoring notification", "method", req.Method)
		if a.opts.AnswerNotifications {
			_ = a.t.write(ctx, errorResponse(nullID, errorf(acpsdk.CodeMethodNotFound, "method not found: %s", req.Method)))
		}
		return nil, acpsdk.ErrMethodNotFound
	}
	if err := a.rejectExtras(req); err != nil {
		return nil, err
	}
	if req.Method == gen.MethodInitialize && a.opts.MalformedCapabilities {
		return a.malformedInitialize(), nil
	}
	if !a.advertised(req.Method) {
		// Before decoding: a method the agent does not offer is unknown,
		// whatever its params.
		return nil, a.notImplemented(req.Method)
	}
	al := &afterLines{id: compact(req.ID)}
	res, err := next(context.WithValue(ctx, afterKey{}, al), req)
	//nolint:errorlint // the sentinel itself marks a method the typed agent lacks; a typed method's own -32601 passes as is
	if err == acpsdk.ErrMethodNotFound {
		return nil, a.notImplemented(req.Method)
	}
	if err != nil {
		return nil, err // bad params are already -32602 with data.path
	}
	a.record(req.Method, req.Params, res)
	if len(al.lines) > 0 {
		a.t.mu.Lock()
		a.t.pending = append(a.t.pending, al)
		a.t.mu.Unlock()
	}
	return res, nil
}

// Serve runs the agent over r and w until r ends, then cancels the turns
// still running, waits for their handlers and returns. exit is called for
// the deliberate exits (exit=CODE, --die-on-garbage); when it returns, the
// turn ends as if the process had gone.
func Serve(ctx context.Context, opts Options, r io.Reader, w io.Writer, log *slog.Logger, exit func(int)) error {
	a, done := start(ctx, opts, r, w, log, exit)
	<-a.t.conn.Done()
	a.drain(drainBound)
	done()
	return nil
}

// drainBound bounds how long the agent keeps answering after its input
// ends.
const drainBound = time.Second

// start wires an agent to a connection over r and w. The returned func
// stops the agent: it cancels running turns, closes the connection and
// waits for every goroutine.
func start(ctx context.Context, opts Options, r io.Reader, w io.Writer, log *slog.Logger, exit func(int)) (*Agent, func()) {
	ctx, cancel := context.WithCancel(ctx)
	a := newAgent(ctx, cancel, opts, log, exit)
	a.t = &transport{log: log, kick: make(chan struct{}, 1), ready: make(chan struct{})}
	a.t.side = acpsdk.NewAgentSide(r, w, (*typedAgent)(a), &acpsdk.SideOptions{
		Options: acpsdk.Options{
			Tap:        a.t.tap,
			Logger:     log,
			WriteQueue: opts.writeQueue,
			Observer: acpsdk.Observer{
				UnparsableLine: func(line []byte) {
					log.Warn("line is not JSON", "bytes", len(line))
					if opts.DieOnGarbage {
						exit(3)
					}
				},
			},
		},
		Middleware: a.intercept,
	})
	a.t.conn = a.t.side.Conn()
	close(a.t.ready)
	var wg sync.WaitGroup
	wg.Go(func() { a.t.flusher(ctx) })
	return a, func() {
		cancel()
		_ = a.t.side.Close()
		wg.Wait()
	}
}
