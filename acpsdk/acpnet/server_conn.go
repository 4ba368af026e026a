package acpnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"acpkit.dev/acpsdk"
)

// Why a connection ended.
var (
	errShuttingDown = errors.New("acpnet: server shutting down")
	errDeleted      = errors.New("acpnet: connection deleted by the client")
	errPeerGone     = errors.New("acpnet: the client went away")
	errAgentEnded   = errors.New("acpnet: the agent ended the connection")
	errNotInitResp  = errors.New("acpnet: the agent's first message is not the initialize response")
	errNoAgent      = errors.New("acpnet: the AgentFunc returned no connection")
)

// serverConn is one accepted connection: the agent's acpsdk.Conn reads
// the client's messages from in and writes its own through write, which
// routes them to the connection's event streams (HTTP) or its socket
// (WebSocket). The agent's Conn does the protocol — ordering, bounds,
// dispatch; this only moves lines.
type serverConn struct {
	h    *Handler
	id   string
	in   *linePipe
	ws   *wsConn // nil over HTTP
	conn *acpsdk.Conn

	// Owned by the agent Conn's writer goroutine (write and what it calls).
	split    lineSplitter
	answered bool // the first line, the initialize response, went out

	// Owned by the agent Conn's reader goroutine, over WebSocket once
	// initialized (readFromSocket); before, by the upgrade's handler.
	rd        messageReader
	pending   []byte // the rest of a line the agent has not read yet
	readEnded bool

	initID   []byte     // the initialize request's id
	initDone chan error // cap 1: the outcome of the initialize response
	initBody []byte     // HTTP: the initialize response, for the POST

	mu sync.Mutex
	// closed: shut down, streams end now. ended: the agent's output ended,
	// streams end once drained. Neither: live.
	closed, ended bool
	why           error
	done          chan struct{} // closed with closed
	agentGone     chan struct{} // closed when the agent closed its stream
	gone          chan struct{} // closed once the agent returned (retire)
	retireOnce    sync.Once

	connStream *mailbox
	sessions   map[string]*mailbox
	unread     int // session streams holding messages that no one reads
	// pendingRoutes: the client's requests by id key, to where the
	// answer goes.
	pendingRoutes map[string]route
	// responseRoutes: the agent's requests, to the session they went to.
	responseRoutes map[string]string
	buffered       int // bytes queued on the streams
	peakBuffered   int // the most buffered ever was
	progress       chan struct{}
	wantProgress   bool
	waiting        int // bytes of POST bodies waiting to enter in
}

func newServerConn(h *Handler) *serverConn {
	c := &serverConn{
		h:              h,
		id:             newConnectionID(),
		in:             newLinePipe(defaultPipeBytes),
		initDone:       make(chan error, 1),
		done:           make(chan struct{}),
		agentGone:      make(chan struct{}),
		gone:           make(chan struct{}),
		sessions:       make(map[string]*mailbox),
		pendingRoutes:  make(map[string]route),
		responseRoutes: make(map[string]string),
		progress:       make(chan struct{}),
	}
	c.connStream = newMailbox("")
	return c
}

// agentStream is what the agent's Conn reads and writes.
type agentStream struct{ c *serverConn }

// Read reads the pipe the transport feeds; over WebSocket, once the
// pipe was handed over, the socket.
func (s *agentStream) Read(b []byte) (int, error) {
	n, err := s.c.in.Read(b)
	if errors.Is(err, errSocketHandedOver) {
		return s.c.readFromSocket(b)
	}
	return n, err
}

func (s *agentStream) Write(p []byte) (int, error) { return s.c.write(p) }
func (s *agentStream) Close() error                { s.c.agentClosed(); return nil }

// start runs the AgentFunc for this connection.
func (c *serverConn) start(peer Peer) error {
	conn := c.h.newAgent(&agentStream{c: c}, peer)
	if conn == nil {
		return errNoAgent
	}
	c.mu.Lock()
	c.conn = conn
	closed := c.closed
	c.mu.Unlock()
	if closed {
		// Shut down while the agent was being made (Handler.Close).
		_ = conn.Close()
		return ErrClosed
	}
	return nil
}

// awaitInitialize feeds the initialize request to the agent and waits for
// its answer: nil once it went out (WebSocket) or is in initBody (HTTP).
func (c *serverConn) awaitInitialize(ctx context.Context, line []byte) error {
	if err := c.in.send(ctx, line); err != nil {
		return err
	}
	select {
	case err := <-c.initDone:
		return err
	case <-c.agentGone:
		return errAgentEnded
	case <-c.done:
		return c.why
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write takes what the agent's Conn writes: over WebSocket, its messages
// go out in one write.
func (c *serverConn) write(p []byte) (int, error) {
	var err error
	if c.ws != nil && c.answered {
		err = c.ws.sendLines(&c.split, p)
	} else {
		err = c.split.split(p, c.route)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *serverConn) route(line []byte) error {
	if !c.answered {
		c.answered = true
		return c.answerInitialize(line)
	}
	if c.ws != nil {
		return c.ws.send(line)
	}
	return c.routeHTTP(line)
}

// answerInitialize checks that the agent's first message answers
// initialize, as the TypeScript server requires, and delivers it.
func (c *serverConn) answerInitialize(line []byte) error {
	env, _ := scanEnvelope(line, false)
	if env.shape != shapeObject || !env.isResponse() || !bytes.Equal(env.id, c.initID) {
		c.initDone <- errNotInitResp
		return errNotInitResp
	}
	if c.ws != nil {
		err := c.ws.send(line)
		c.initDone <- err
		return err
	}
	c.initBody = bytes.Clone(line)
	c.initDone <- nil
	return nil
}

// routeHTTP queues one of the agent's messages on the stream TR-7 names,
// then waits while the streams hold MaxBufferedBytes.
func (c *serverConn) routeHTTP(line []byte) error {
	env, _ := scanEnvelope(line, false)
	maxID := c.h.opts.MaxIDLength
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	var sid string
	var limit error
	switch {
	case env.shape != shapeObject:
	case env.isResponse():
		if key, ok := idKey(env.id); ok {
			sid = c.pendingRoutes[key].stream(c.sessions)
			delete(c.pendingRoutes, key)
		}
		// Never hand out a session id this connection would refuse.
		if len(env.resultSessionID) > maxID {
			limit = &LimitError{Limit: "MaxIDLength", Value: int64(maxID)}
		}
	case env.hasMethod:
		sid = env.sessionID
		if len(sid) > maxID {
			limit = &LimitError{Limit: "MaxIDLength", Value: int64(maxID)}
		}
		if key, ok := idKey(env.id); ok {
			c.responseRoutes[key] = strings.Clone(sid)
		}
	}
	var mb *mailbox
	if limit == nil {
		mb, limit = c.streamFor(sid)
	}
	if limit != nil {
		c.mu.Unlock()
		c.closeForLimit(limit)
		return limit
	}
	c.push(mb, line)
	err := c.waitRoomLocked(context.Background())
	c.mu.Unlock()
	return err
}

// streamFor returns the stream of a session, making one that buffers
// until a reader comes ("" is the connection stream). c.mu is held.
func (c *serverConn) streamFor(sid string) (*mailbox, error) {
	if sid == "" {
		return c.connStream, nil
	}
	if mb := c.sessions[sid]; mb != nil {
		return mb, nil
	}
	if max := c.h.opts.MaxUnreadSessionStreams; c.unread >= max {
		return nil, &LimitError{Limit: "MaxUnreadSessionStreams", Value: int64(max)}
	}
	sid = strings.Clone(sid) // it aliased the line
	mb := newMailbox(sid)
	c.sessions[sid] = mb
	c.unread++
	return mb, nil
}

// push queues a copy of line on mb. c.mu is held.
func (c *serverConn) push(mb *mailbox, line []byte) {
	mb.queue = append(mb.queue, bytes.Clone(line))
	c.buffered += len(line)
	c.peakBuffered = max(c.peakBuffered, c.buffered)
	mb.signal()
}

// waitRoomLocked waits while the streams hold MaxBufferedBytes and the
// connection lives; when no client takes any output for MaxOutputStall it
// closes the connection (TR-18). c.mu is held, and released while waiting.
func (c *serverConn) waitRoomLocked(ctx context.Context) error {
	var stall *time.Timer
	defer func() {
		if stall != nil {
			stall.Stop()
		}
	}()
	for !c.closed && !c.ended && c.buffered >= c.h.opts.MaxBufferedBytes {
		if stall == nil {
			stall = time.NewTimer(c.h.opts.MaxOutputStall)
		} else {
			stall.Reset(c.h.opts.MaxOutputStall)
		}
		c.wantProgress = true
		progress := c.progress
		c.mu.Unlock()
		select {
		case <-progress:
		case <-c.done:
		case <-ctx.Done():
			c.mu.Lock()
			return ctx.Err()
		case <-stall.C:
			err := &LimitError{Limit: "MaxOutputStall", Value: int64(c.h.opts.MaxOutputStall / time.Millisecond)}
			c.closeForLimit(err)
			c.mu.Lock()
			return err
		}
		c.mu.Lock()
	}
	if c.closed {
		return ErrClosed
	}
	return nil
}

// madeProgress wakes whoever waits for room. c.mu is held.
func (c *serverConn) madeProgress() {
	if c.wantProgress {
		close(c.progress)
		c.progress, c.wantProgress = make(chan struct{}), false
	}
}

// route is where the answer to a client's request goes: the stream of
// session sid ("" the connection's).
//
// load marks session/load, whose answer TR-7 puts on the connection
// stream while its replay goes on the session's; nothing orders two
// streams (each is its own TCP connection over HTTP/1.1), and the
// TypeScript client was measured reading the answer before the replay
// in about half the runs under load. So while the session's stream has a
// reader the answer follows the replay on it (clients match answers by
// id on any stream, as the TypeScript client does); without one it goes
// on the connection stream, where a client that never opened the
// session's stream still gets it.
type route struct {
	sid  string
	load bool
}

// stream names the stream the answer goes on now.
func (r route) stream(sessions map[string]*mailbox) string {
	if r.load {
		if mb := sessions[r.sid]; mb == nil || !mb.reading {
			return ""
		}
	}
	return r.sid
}

// mailbox is one event stream's queue: the connection stream or a
// session's. At most one reader (an open GET) takes from it.
type mailbox struct {
	sid     string
	queue   [][]byte
	reading bool
	// stop bounds the reader's writes when the connection shuts down: one
	// in progress to a client that reads nothing must not hold the
	// reader forever; an idle reader ends its stream cleanly at once.
	stop func()
	wake chan struct{} // cap 1
}

func newMailbox(sid string) *mailbox {
	return &mailbox{sid: sid, wake: make(chan struct{}, 1)}
}

func (mb *mailbox) signal() {
	select {
	case mb.wake <- struct{}{}:
	default:
	}
}

// acquire gives a GET the stream of a session ("" the connection
// stream), or the status and text of why not (TR-5).
func (c *serverConn) acquire(sid string) (*mailbox, int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ended {
		return nil, 404, "Unknown Acp-Connection-Id"
	}
	if sid == "" {
		if c.connStream.reading {
			return nil, 409, "Outbound stream already has an active receiver"
		}
		c.connStream.reading = true
		return c.connStream, 0, ""
	}
	if max := c.h.opts.MaxIDLength; len(sid) > max {
		return nil, 400, fmt.Sprintf("Session ID exceeds maxIdLength (%d)", max)
	}
	mb := c.sessions[sid]
	switch {
	case mb == nil:
		mb = newMailbox(sid)
		c.sessions[sid] = mb
	case mb.reading:
		return nil, 409, "Outbound stream already has an active receiver"
	default:
		c.unread--
	}
	mb.reading = true
	return mb, 0, ""
}

// release ends a GET's hold on its stream. A session stream left with
// messages counts as unread again; one more than the bound closes the
// connection; an empty one is forgotten.
func (c *serverConn) release(mb *mailbox) {
	c.mu.Lock()
	mb.reading, mb.stop = false, nil
	if c.closed || mb == c.connStream {
		c.mu.Unlock()
		return
	}
	if len(mb.queue) == 0 {
		if c.sessions[mb.sid] == mb {
			delete(c.sessions, mb.sid)
		}
		c.mu.Unlock()
		return
	}
	c.unread++
	max := c.h.opts.MaxUnreadSessionStreams
	over := !c.ended && c.unread > max
	c.mu.Unlock()
	if over {
		c.closeForLimit(&LimitError{Limit: "MaxUnreadSessionStreams", Value: int64(max)})
	}
}

// maxBatchBytes bounds what one write to an event stream takes from its
// queue.
const maxBatchBytes = 256 << 10

// take removes the next messages of mb for its reader. end says the
// stream is over: nothing is queued and nothing more will be.
func (c *serverConn) take(mb *mailbox, into [][]byte) (lines [][]byte, end bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return into, true
	}
	n, size := 0, 0
	for n < len(mb.queue) && (n == 0 || size+len(mb.queue[n]) <= maxBatchBytes) {
		into = append(into, mb.queue[n])
		size += len(mb.queue[n])
		mb.queue[n] = nil
		n++
	}
	if n > 0 {
		mb.queue = mb.queue[n:]
		if len(mb.queue) == 0 {
			mb.queue = nil
		}
		c.buffered -= size
		c.madeProgress()
	}
	return into, len(mb.queue) == 0 && c.ended
}

// closeForLimit ends the connection because a peer broke a bound.
func (c *serverConn) closeForLimit(err error) {
	c.h.log.Warn("acpnet: closing connection", "connection", c.id, "reason", err.Error())
	c.shutdown(err)
}

// shutdown ends the connection now: streams end, queued output is
// dropped, the agent reads the end of its input and is closed; over
// WebSocket the socket is closed with the code for why (TR-15).
func (c *serverConn) shutdown(why error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.why = true, why
	close(c.done)
	for _, mb := range c.allStreams() {
		mb.queue = nil
		mb.signal()
		if mb.stop != nil {
			mb.stop()
		}
	}
	c.buffered = 0
	c.wantProgress = true
	c.madeProgress()
	conn, ws := c.conn, c.ws
	c.mu.Unlock()
	c.h.unlist(c)
	c.in.close(io.EOF)
	c.h.log.Info("acpnet: connection ended", "connection", c.id, "reason", why.Error())
	go func() {
		defer c.retire()
		if ws != nil {
			ws.closeFor(why)
		}
		if conn != nil {
			_ = conn.Close()
		}
	}()
}

// retire drops the connection from its Handler for good, once nothing of
// it runs any more.
func (c *serverConn) retire() {
	c.retireOnce.Do(func() {
		close(c.gone)
		c.h.release(c)
	})
}

// allStreams lists every stream of the connection. c.mu is held.
func (c *serverConn) allStreams() []*mailbox {
	all := make([]*mailbox, 0, 1+len(c.sessions))
	all = append(all, c.connStream)
	for _, mb := range c.sessions {
		all = append(all, mb)
	}
	return all
}

// agentClosed handles the agent's Conn closing its stream: its output
// has ended. The streams deliver what they hold and then end; the
// connection is gone for new requests.
func (c *serverConn) agentClosed() {
	c.in.close(io.EOF)
	c.mu.Lock()
	if c.closed || c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	close(c.agentGone)
	for _, mb := range c.allStreams() {
		mb.signal()
	}
	c.wantProgress = true
	c.madeProgress()
	ws := c.ws
	c.mu.Unlock()
	c.h.unlist(c)
	c.h.log.Info("acpnet: connection ended", "connection", c.id, "reason", errAgentEnded.Error())
	if ws == nil {
		c.retire() // the agent's Conn is closing itself; readers drain on their own
		return
	}
	go func() {
		defer c.retire()
		ws.closeFor(errAgentEnded)
	}()
}
