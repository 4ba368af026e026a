package acpnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/coder/websocket"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// WebSocketStream is the client end of ACP over WebSocket (TR-13…TR-15):
// each message the client's acpsdk.Conn writes is one text frame, and
// each text frame received is one message for it to read (binary frames
// are ignored). Pass it to acpsdk.NewClientSide as both reader and writer.
// A close frame with a status other than a normal end ends the reader
// with a *CloseError.
type WebSocketStream struct {
	sock   *websocket.Conn
	id     string
	max    int
	split  lineSplitter // the writer's
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once

	// The reader's: the socket is read in the Conn's reader goroutine, as
	// a subprocess's pipe is, so a message reaches the Conn without a
	// hand-off between goroutines, and a Conn that stops reading stops
	// reading the socket (SDK-9).
	rd      messageReader
	pending []byte // the rest of a line Read has not returned yet
	readErr error  // how the socket ended, returned once pending is out
}

// DialWebSocket upgrades a connection to the agent at endpoint (such as
// ws://127.0.0.1:8080/acp). A refused upgrade is a *StatusError. opts
// may be nil.
func DialWebSocket(ctx context.Context, endpoint string, opts *DialOptions) (*WebSocketStream, error) {
	o := opts.withDefaults()
	sock, resp, err := websocket.Dial(ctx, endpoint, &websocket.DialOptions{
		HTTPClient:   o.HTTPClient,
		HTTPHeader:   o.Header.Clone(),
		Subprotocols: o.Subprotocols,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			se := &StatusError{Method: http.MethodGet, StatusCode: resp.StatusCode, Status: resp.Status}
			if resp.Body != nil {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
				se.Body = string(body)
			}
			return nil, se
		}
		return nil, fmt.Errorf("acpnet: websocket: %w", err)
	}
	sock.SetReadLimit(-1) // messages are bounded by readMessage
	sctx, cancel := context.WithCancel(context.Background())
	return &WebSocketStream{
		sock:   sock,
		id:     resp.Header.Get(HeaderConnectionID),
		max:    o.MaxMessageBytes,
		ctx:    sctx,
		cancel: cancel,
	}, nil
}

// ConnectionID returns the Acp-Connection-Id of the upgrade's answer.
func (s *WebSocketStream) ConnectionID() string { return s.id }

// Read returns the agent's messages as newline-delimited JSON, reading
// the socket for the next one when what it read is out. One reader at a
// time, as for any io.Reader a Conn reads.
func (s *WebSocketStream) Read(b []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.readErr != nil {
			return 0, s.readErr
		}
		s.pending, s.readErr = s.readLine()
	}
	n := copy(b, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// readLine reads frames until one is a message for the Conn, and returns
// it as a line; or the error the reader ends with.
func (s *WebSocketStream) readLine() ([]byte, error) {
	for {
		msg, err := s.rd.readShared(s.sock, s.max)
		if err != nil {
			if s.ctx.Err() != nil {
				return nil, ErrClosed
			}
			if errors.Is(err, ErrMessageTooLarge) {
				_ = s.sock.Close(websocket.StatusMessageTooBig, "message too large")
			}
			return nil, socketEnd(err)
		}
		if msg == nil {
			continue
		}
		line, reply := frameLine(msg)
		if reply != nil {
			_ = s.sock.Write(context.Background(), websocket.MessageText, reply)
			continue
		}
		return line, nil
	}
}

// Write sends each complete line as one text frame.
func (s *WebSocketStream) Write(p []byte) (int, error) {
	// Background: a context that can end costs the library a callback per
	// message; Close unblocks a write anyway.
	err := s.split.split(p, func(line []byte) error {
		return s.sock.Write(context.Background(), websocket.MessageText, line)
	})
	if err != nil {
		if s.ctx.Err() != nil {
			return 0, ErrClosed
		}
		return 0, fmt.Errorf("acpnet: websocket: %w", err)
	}
	return len(p), nil
}

// Close ends the connection normally: a close frame without a status
// code (TR-15). A Read in progress returns ErrClosed.
func (s *WebSocketStream) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		err = s.sock.Close(websocket.StatusNoStatusRcvd, "")
		if errors.Is(err, io.EOF) || websocket.CloseStatus(err) != -1 {
			err = nil
		}
	})
	return err
}

// frameLine makes one received frame a line for the Conn. The Conn
// answers what is not a message itself; only what it cannot see whole is
// answered here: a blank frame or JSON spread over lines that is not
// valid gets -32700 (reply), as the TypeScript SDK answers it.
func frameLine(msg []byte) (line, reply []byte) {
	if jsonx.SkipSpace(msg, 0) == len(msg) {
		return nil, errorFrame(nil, -32700, "Parse error")
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		if !jsonx.Valid(msg) {
			return nil, errorFrame(nil, -32700, "Parse error")
		}
		oneLine(msg)
	}
	return append(msg, '\n'), nil
}

// socketEnd is what the reader returns once the socket ended: io.EOF for
// a normal end, a *CloseError for a close with another status.
func socketEnd(err error) error {
	switch code := websocket.CloseStatus(err); code {
	case -1:
		if errors.Is(err, ErrMessageTooLarge) {
			return err
		}
		return fmt.Errorf("acpnet: websocket: %w", err)
	case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd:
		return io.EOF
	default:
		var ce websocket.CloseError
		errors.As(err, &ce)
		return &CloseError{Code: int(code), Reason: ce.Reason}
	}
}

// messageReader reads messages through one reused buffer.
type messageReader struct {
	buf []byte
}

// read reads the next message into a slice of its own with room for a
// line end: its bytes for a text frame, nil for a binary one; more than
// max bytes is ErrMessageTooLarge. It reads with no context (which would
// cost the library a callback per message); closing the socket ends it.
func (m *messageReader) read(sock *websocket.Conn, limit int) ([]byte, error) {
	shared, err := m.readShared(sock, limit)
	if shared == nil {
		return nil, err
	}
	msg := make([]byte, len(shared), len(shared)+1)
	copy(msg, shared)
	return msg, nil
}

// readShared is read into the reader's own buffer: the message, with room
// for a line end, is valid until the next read.
func (m *messageReader) readShared(sock *websocket.Conn, limit int) ([]byte, error) {
	if cap(m.buf) > 1<<20 {
		m.buf = nil // do not keep a large message's buffer
	}
	typ, r, err := sock.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	n := 0
	for {
		if n == len(m.buf) {
			m.buf = slices.Grow(m.buf[:n], max(4<<10, n))
			m.buf = m.buf[:cap(m.buf)]
		}
		k, err := r.Read(m.buf[n:min(len(m.buf), limit+1)])
		n += k
		if n > limit {
			// The socket is closed for it: nothing more is read.
			return nil, ErrMessageTooLarge
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if typ != websocket.MessageText {
		return nil, nil
	}
	if n == len(m.buf) {
		m.buf = slices.Grow(m.buf[:n], 1)
	}
	return m.buf[: n : n+1], nil
}
