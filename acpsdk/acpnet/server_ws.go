package acpnet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// serveWebSocket upgrades a GET to a WebSocket connection (TR-13…TR-15):
// one JSON-RPC message per text frame, the first an initialize request.
func (h *Handler) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if h.opts.DisableWebSocket {
		textError(w, "WebSocket upgrade is not implemented", http.StatusUpgradeRequired)
		return
	}
	c := h.newConnection(w)
	if c == nil {
		return
	}
	w.Header().Set(HeaderConnectionID, c.id)
	// No subprotocol is required; the client's first offer is echoed.
	var protocols []string
	if offer := firstSubprotocol(r); offer != "" {
		protocols = []string{offer}
	}
	// Origin was checked by admit, against the allowlist.
	hj := &batchingHijacker{ResponseWriter: w}
	sock, err := websocket.Accept(hj, r, &websocket.AcceptOptions{Subprotocols: protocols, InsecureSkipVerify: true})
	if err != nil {
		c.retire()
		return
	}
	sock.SetReadLimit(-1) // messages are bounded by readMessage
	ctx, cancel := context.WithCancel(context.Background())
	ws := newWSConn(sock, hj.conn, ctx, cancel, h.opts.MaxOutputStall, func() {
		c.closeForLimit(&LimitError{Limit: "MaxOutputStall", Value: int64(h.opts.MaxOutputStall / time.Millisecond)})
	})
	c.mu.Lock()
	c.ws = ws
	why := c.why
	c.mu.Unlock()
	if why != nil {
		// Shut down (Handler.Close) while upgrading.
		ws.closeFor(why)
		c.retire()
		return
	}
	h.log.Info("acpnet: connection opened", "connection", c.id, "transport", "websocket", "remote", r.RemoteAddr)
	peer := Peer{ConnectionID: c.id, Transport: "websocket", RemoteAddr: r.RemoteAddr, Header: r.Header.Clone()}
	c.readSocket(ctx, peer)
}

func firstSubprotocol(r *http.Request) string {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				return p
			}
		}
	}
	return ""
}

// readSocket reads the client's frames until the connection is
// initialized, then hands the socket to the agent's reader (see
// readFromSocket); or until the socket or the connection ends first.
func (c *serverConn) readSocket(ctx context.Context, peer Peer) {
	for {
		msg, err := c.rd.read(c.ws.sock, c.h.opts.MaxMessageBytes)
		if err != nil {
			c.socketFailed(err)
			return
		}
		if msg == nil {
			continue // a binary frame: ignored (TR-13)
		}
		if !c.firstMessages(ctx, msg, peer) {
			return
		}
		if c.conn != nil {
			// Initialized: the agent has read its input so far, and
			// reads the socket itself from now on.
			c.in.close(errSocketHandedOver)
			return
		}
	}
}

// errSocketHandedOver ends a WebSocket connection's input pipe once the
// agent's reader reads the socket itself.
var errSocketHandedOver = errors.New("acpnet: the socket is read by the agent's reader")

// readFromSocket is the agent's Read once the connection is initialized:
// the agent's reader reads the client's frames itself, so a message
// reaches the agent without a hand-off between goroutines, and an agent
// that stops reading stops reading the socket, as over stdio (SDK-9).
// What is not for the agent is answered here (laterFrame). The input
// ends (io.EOF) when the socket or the connection does.
func (c *serverConn) readFromSocket(b []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.readEnded {
			return 0, io.EOF
		}
		c.pending, c.readEnded = c.nextFromSocket()
	}
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// nextFromSocket reads frames until one is a line for the agent; ended
// says the input is over instead.
func (c *serverConn) nextFromSocket() (line []byte, ended bool) {
	maxID := c.h.opts.MaxIDLength
	for {
		msg, err := c.rd.readShared(c.ws.sock, c.h.opts.MaxMessageBytes)
		select {
		case <-c.done: // shut down: what arrives now is not read
			return nil, true
		case <-c.agentGone:
			return nil, true
		default:
		}
		if err != nil {
			c.socketFailed(err)
			return nil, true
		}
		if msg == nil {
			continue // a binary frame: ignored (TR-13)
		}
		act, reply, line := laterFrame(msg, maxID)
		switch act {
		case frameReply:
			if !c.ws.reply(reply) {
				c.shutdown(errPeerGone)
				return nil, true
			}
			continue
		case frameLimit:
			c.closeForLimit(&LimitError{Limit: "MaxIDLength", Value: int64(maxID)})
			return nil, true
		}
		return line, false
	}
}

// socketFailed ends the connection for a failed read of the socket.
func (c *serverConn) socketFailed(err error) {
	if errors.Is(err, ErrMessageTooLarge) {
		max := c.h.opts.MaxMessageBytes
		c.closeForLimit(&LimitError{Limit: "MaxMessageBytes", Value: int64(max)})
	} else {
		c.shutdown(errPeerGone)
	}
}

// frameAction is what the server does with one of the client's frames.
type frameAction uint8

const (
	frameForward    frameAction = iota // hand the line to the agent
	frameReply                         // answer with reply; the socket stays
	frameIgnore                        // nothing
	frameInitialize                    // start the agent with the line
	frameViolation                     // close 1002 with reason
	frameLimit                         // close 1008
)

// firstFrame decides on a frame before initialize, as the TypeScript
// server does (TR-14): what is not a message is answered, an answer is
// ignored, and the first request or notification must be initialize with
// an id, else the socket closes 1002. id is the initialize request's.
func firstFrame(msg []byte) (act frameAction, reply, line, id []byte, reason string) {
	env, err := scanEnvelope(msg, true)
	switch {
	case env.shape == shapeArray:
		return frameReply, batchRefusal, nil, nil, ""
	case env.shape == shapeOther:
		return frameReply, errorFrame(nil, -32600, "Invalid Request"), nil, nil, ""
	case err != nil:
		return frameReply, errorFrame(nil, -32700, "Parse error"), nil, nil, ""
	case env.isResponseShaped():
		return frameIgnore, nil, nil, nil, ""
	case !env.isRequest() && !env.isNotification():
		return frameReply, errorFrame(nil, -32600, "Invalid Request"), nil, nil, ""
	case env.method != "initialize" || env.id == nil:
		return frameViolation, nil, nil, nil, "First message must be initialize"
	case jsonx.IsNull(env.id):
		return frameViolation, nil, nil, nil, "Initialize request must include an ID"
	}
	return frameInitialize, nil, append(oneLine(msg), '\n'), env.id, ""
}

// laterFrame decides on a frame after initialize: it goes to the agent as
// one line, whose connection answers what is not a message, except what
// it could not see whole or must not see (TR-14): a blank frame and JSON
// spread over lines that is not valid (-32700), a batch (-32600 with id
// null), a second initialize (-32600), and ids over maxID (close 1008).
// The scan is skipped for the common frame: one line, no array, not
// initialize, too short to hold a long id.
func laterFrame(msg []byte, maxID int) (act frameAction, reply, line []byte) {
	first := jsonx.SkipSpace(msg, 0)
	if first == len(msg) {
		return frameReply, errorFrame(nil, -32700, "Parse error"), nil
	}
	multiline := bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0
	mayInit := bytes.Contains(msg, []byte(`"initialize"`))
	if msg[first] == '[' || multiline || mayInit || len(msg) > maxID {
		env, err := scanEnvelope(msg, true)
		switch {
		case env.shape == shapeArray:
			return frameReply, batchRefusal, nil
		case err != nil && env.shape != shapeOther:
			return frameReply, errorFrame(nil, -32700, "Parse error"), nil
		case env.isRequest() && env.method == "initialize":
			return frameReply, errorFrame(env.id, -32600, "Initialize not allowed on existing connection"), nil
		case idLength(env.id) > maxID || len(env.sessionID) > maxID:
			return frameLimit, nil, nil
		}
		if multiline {
			oneLine(msg)
		}
	}
	return frameForward, nil, append(msg, '\n')
}

// errorFrame is a JSON-RPC error response as one frame.
func errorFrame(id []byte, code int, message string) []byte {
	return bytes.TrimSuffix(errorLine(id, code, message, nil), []byte{'\n'})
}

// firstMessages handles frames until the connection is initialized.
func (c *serverConn) firstMessages(ctx context.Context, msg []byte, peer Peer) bool {
	act, reply, line, id, reason := firstFrame(msg)
	switch act {
	case frameReply:
		return c.ws.reply(reply)
	case frameIgnore:
		return true
	case frameViolation:
		c.shutdown(&protocolError{reason})
		return false
	}
	c.initID = append([]byte(nil), id...)
	err := c.start(peer)
	if err == nil {
		err = c.awaitInitialize(ctx, line)
	}
	if err != nil {
		data := jsonx.AppendString(nil, err.Error())
		c.ws.reply(bytes.TrimSuffix(errorLine(id, -32603, "Initialize failed", data), []byte{'\n'}))
		c.shutdown(&internalError{"Initialize failed"})
		return false
	}
	return true
}

// protocolError closes a socket 1002, internalError 1011.
type (
	protocolError struct{ reason string }
	internalError struct{ reason string }
)

func (e *protocolError) Error() string { return "acpnet: protocol violation: " + e.reason }
func (e *internalError) Error() string { return "acpnet: internal error: " + e.reason }

// batchingHijacker hands the WebSocket library a connection that can
// gather writes: the library flushes every message, and the agent's
// writer hands over its messages in batches, so a batch is sent in one
// write instead of one system call per message, as the event streams
// send theirs.
type batchingHijacker struct {
	http.ResponseWriter
	conn *batchConn
}

// Hijack takes the connection, with a buffered writer over batchConn.
func (h *batchingHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &batchConn{Conn: nc}
	return h.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriter(h.conn)), nil
}

// batchConn writes through, except between begin and end, when it
// gathers what is written and end sends it at once.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      []byte
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.batching {
		b.buf = append(b.buf, p...)
		b.mu.Unlock()
		return len(p), nil
	}
	b.mu.Unlock()
	return b.Conn.Write(p)
}

func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// end sends what was gathered. Writes from elsewhere (a pong, a close)
// wait meanwhile, so the bytes go out in the order they were written.
func (b *batchConn) end() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	if cap(b.buf) > 256<<10 {
		b.buf = nil // do not keep a large batch's buffer
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

// wsConn is one WebSocket with the writes bounded in time: a write that
// waits longer than stall (a peer that reads nothing) closes it.
type wsConn struct {
	sock    *websocket.Conn
	batch   *batchConn
	ctx     context.Context
	cancel  context.CancelFunc
	stall   time.Duration
	stalled func()
	// writing is when the write in progress began (UnixNano), 0 when idle.
	writing atomic.Int64
	// sendFunc is send as a func value, made once: a method value made
	// per write would cost an allocation each.
	sendFunc func([]byte) error
	watch    chan struct{} // closed to stop the watchdog
	once     sync.Once
}

func newWSConn(sock *websocket.Conn, batch *batchConn, ctx context.Context, cancel context.CancelFunc, stall time.Duration, stalled func()) *wsConn {
	w := &wsConn{sock: sock, batch: batch, ctx: ctx, cancel: cancel, stall: stall, stalled: stalled, watch: make(chan struct{})}
	w.sendFunc = w.send
	go w.watchdog()
	return w
}

// watchdog closes the socket when one write has waited longer than stall.
func (w *wsConn) watchdog() {
	tick := max(w.stall/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if start := w.writing.Load(); start != 0 && time.Since(time.Unix(0, start)) > w.stall {
				// The connection shuts down for the limit, which closes
				// the socket without a handshake (closeFor): a peer that
				// reads nothing cannot read a close frame either.
				w.stalled()
				return
			}
		case <-w.watch:
			return
		case <-w.ctx.Done():
			return
		}
	}
}

// send writes one message as a text frame.
func (w *wsConn) send(msg []byte) error {
	w.writing.Store(time.Now().UnixNano())
	// Background: a context that can end costs the library a callback per
	// message; closing the socket unblocks a write anyway.
	err := w.sock.Write(context.Background(), websocket.MessageText, msg)
	w.writing.Store(0)
	return err
}

// sendLines writes each complete line of p that split finds as one
// message, all gathered into one write.
func (w *wsConn) sendLines(split *lineSplitter, p []byte) error {
	w.batch.begin()
	err := split.split(p, w.sendFunc)
	w.writing.Store(time.Now().UnixNano())
	if endErr := w.batch.end(); err == nil {
		err = endErr
	}
	w.writing.Store(0)
	return err
}

// reply sends a message the transport answers itself; false when the
// socket failed.
func (w *wsConn) reply(msg []byte) bool {
	return w.send(msg) == nil
}

// closeFor closes the socket with the code TR-15 gives why: 1001 the
// server is shutting down, 1002 a protocol violation, 1008 a limit, 1011
// an internal error; the agent ending closes it without a code; a client
// that went away gets nothing.
func (w *wsConn) closeFor(why error) {
	w.once.Do(func() { w.close(why) })
}

func (w *wsConn) close(why error) {
	defer w.cancel()
	defer close(w.watch)
	var (
		protoErr    *protocolError
		internalErr *internalError
		limitErr    *LimitError
	)
	switch {
	case errors.Is(why, errPeerGone):
		_ = w.sock.CloseNow()
	case errors.Is(why, errShuttingDown):
		_ = w.sock.Close(websocket.StatusGoingAway, "Server shutting down")
	case errors.As(why, &protoErr):
		_ = w.sock.Close(websocket.StatusProtocolError, protoErr.reason)
	case errors.As(why, &limitErr):
		if limitErr.Limit == "MaxOutputStall" {
			_ = w.sock.CloseNow()
			return
		}
		_ = w.sock.Close(websocket.StatusPolicyViolation, closeReason(limitErr.Error()))
	case errors.As(why, &internalErr):
		_ = w.sock.Close(websocket.StatusInternalError, internalErr.reason)
	case errors.Is(why, errAgentEnded):
		_ = w.sock.Close(websocket.StatusNoStatusRcvd, "")
	default:
		_ = w.sock.Close(websocket.StatusInternalError, "Internal error")
	}
}

// closeReason fits a reason into a close frame (123 bytes).
func closeReason(s string) string {
	s = strings.TrimPrefix(s, "acpnet: ")
	if len(s) > 123 {
		s = s[:123]
	}
	return s
}
