package refagent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/segmentio/encoding/json"
)

// maxLine bounds a line the agent reads; longer lines are skipped whole.
const maxLine = 64 << 20

// Error is a JSON-RPC error the agent answers with or receives.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// inbound is one decoded line.
type inbound struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// reply is what a request handler returns: the result and any lines that
// must follow the response immediately (written under the same lock, so
// nothing the client does in reaction can come between them).
type reply struct {
	result any
	after  []any
}

// handler is what the connection dispatches to.
type handler interface {
	request(ctx context.Context, method string, params json.RawMessage) (reply, error)
	notification(method string, params json.RawMessage)
	// garbage is called for a line that is not JSON; it reports whether the
	// line should still be answered with -32700.
	garbage(line []byte) bool
}

// conn is the agent's JSON-RPC connection: a reader loop that runs each
// request in its own goroutine (a prompt turn waits on the client while
// session/cancel must still get through) and handles notifications in
// arrival order; writes are serialised.
type conn struct {
	w   io.Writer
	wmu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *inbound

	handlers sync.WaitGroup
}

func newConn(w io.Writer) *conn {
	return &conn{w: w, pending: map[int64]chan *inbound{}}
}

// writeLines writes each message as one line, all under one lock.
func (c *conn) writeLines(msgs ...any) error {
	var buf []byte
	for _, m := range msgs {
		switch v := m.(type) {
		case rawLine:
			buf = append(buf, v...)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("refagent: encoding a message: %w", err)
			}
			buf = append(buf, b...)
		}
		buf = append(buf, '\n')
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(buf); err != nil {
		return fmt.Errorf("refagent: writing: %w", err)
	}
	return nil
}

// rawLine is written verbatim (the misbehaviours need lines no encoder
// would produce).
type rawLine []byte

func notification(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

// Notify sends a notification.
func (c *conn) Notify(method string, params any) error {
	return c.writeLines(notification(method, params))
}

// Call sends a request and waits for its response or ctx.
func (c *conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *inbound, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.writeLines(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serve reads r until end of stream, dispatching to h. It returns nil on
// EOF; in-flight request handlers keep running.
func (c *conn) serve(ctx context.Context, r io.Reader, h handler) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !skipping {
			buf = append(buf, chunk...)
			if len(buf) > maxLine {
				buf, skipping = buf[:0], true
			}
		}
		switch {
		case err == nil:
			if !skipping {
				c.dispatch(ctx, bytes.TrimRight(buf, "\r\n"), h)
			}
			buf, skipping = buf[:0], false
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			if len(bytes.TrimSpace(buf)) > 0 && !skipping {
				c.dispatch(ctx, buf, h)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return fmt.Errorf("refagent: reading: %w", err)
		}
	}
}

var nullID = json.RawMessage("null")

func (c *conn) dispatch(ctx context.Context, line []byte, h handler) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		if h.garbage(line) {
			_ = c.writeLines(errorResponse(nullID, errorf(-32700, "parse error")))
		}
		return
	}
	if trimmed[0] != '{' {
		_ = c.writeLines(errorResponse(nullID, errorf(-32600, "invalid request: not an object")))
		return
	}
	var m inbound
	if err := json.Unmarshal(trimmed, &m); err != nil {
		_ = c.writeLines(errorResponse(nullID, errorf(-32600, "invalid request: %v", err)))
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		id := json.RawMessage(bytes.Clone(m.ID))
		params := bytes.Clone(m.Params)
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			rep, err := h.request(ctx, m.Method, params)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					e = errorf(-32603, "%v", err)
				}
				_ = c.writeLines(errorResponse(id, e))
				return
			}
			msgs := append([]any{map[string]any{"jsonrpc": "2.0", "id": id, "result": rep.result}}, rep.after...)
			_ = c.writeLines(msgs...)
		}()
	case m.Method != "":
		h.notification(m.Method, m.Params)
	case m.ID != nil:
		var id int64
		if json.Unmarshal(m.ID, &id) != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	default:
		_ = c.writeLines(errorResponse(nullID, errorf(-32600, "invalid request: neither a request, a notification nor a response")))
	}
}

func errorResponse(id json.RawMessage, e *Error) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": e}
}
