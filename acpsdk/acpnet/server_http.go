package acpnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// sessionScoped lists the methods whose POST must carry Acp-Session-Id
// even when their params carry no sessionId (TR-4).
var sessionScoped = map[string]bool{
	"session/cancel":            true,
	"session/close":             true,
	"session/delete":            true,
	"session/fork":              true,
	"session/load":              true,
	"session/prompt":            true,
	"session/resume":            true,
	"session/set_config_option": true,
	"session/set_mode":          true,
	"session/set_model":         true,
}

// batchRefusal is the body answering a JSON array (TR-9).
var batchRefusal = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"JSON-RPC batches are not supported"}}`)

// servePost takes one client message (TR-1…TR-4, TR-9).
func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	if !isJSONMedia(r.Header.Get("Content-Type")) {
		textError(w, "Unsupported Media Type", http.StatusUnsupportedMediaType)
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	env, err := scanEnvelope(body, true)
	switch {
	case env.shape == shapeArray:
		jsonAnswer(w, batchRefusal, http.StatusBadRequest)
		return
	case env.shape == shapeOther:
		textError(w, "Invalid JSON-RPC message", http.StatusBadRequest)
		return
	case err != nil:
		textError(w, "Invalid JSON", http.StatusBadRequest)
		return
	}
	connID := r.Header.Get(HeaderConnectionID)
	if env.jsonrpc2 && env.id != nil && env.method == "initialize" {
		if connID != "" {
			textError(w, "Initialize not allowed on existing connection", http.StatusBadRequest)
			return
		}
		h.initialize(w, r, body, &env)
		return
	}
	if c := h.connectionOf(w, connID); c != nil {
		c.post(w, r, body, &env)
	}
}

// connectionOf finds the connection a request names, or answers for it:
// 400 when it names none, 404 when it is unknown (TR-3, TR-5, TR-8).
func (h *Handler) connectionOf(w http.ResponseWriter, connID string) *serverConn {
	if connID == "" {
		textError(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return nil
	}
	c := h.lookup(connID)
	if c == nil {
		textError(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
	}
	return c
}

// isJSONMedia: application/json, in any case, parameters allowed (TR-1).
func isJSONMedia(contentType string) bool {
	media, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(media), mediaJSON)
}

// readBody reads a POST body of at most MaxMessageBytes; a longer one is
// refused 413 (TR-18), as soon as its length or its bytes say so.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := int64(h.opts.MaxMessageBytes)
	tooLarge := func() {
		textError(w, fmt.Sprintf("Request body exceeds %d bytes", max), http.StatusRequestEntityTooLarge)
	}
	if r.ContentLength > max {
		tooLarge()
		return nil, false
	}
	size := 512
	if r.ContentLength > 0 {
		size = int(r.ContentLength) + 1 // +1: a read that ends at EOF
	}
	body, err := readAllLimited(http.MaxBytesReader(w, r.Body, max), size)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			tooLarge()
		} else {
			textError(w, "Request body could not be read", http.StatusBadRequest)
		}
		return nil, false
	}
	return body, true
}

// readAllLimited reads r to its end, starting with a buffer of size.
func readAllLimited(r io.Reader, size int) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// initialize opens a connection: the agent answers the initialize request
// and the answer is the POST's body, with the new Acp-Connection-Id
// (TR-2).
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, body []byte, env *envelope) {
	if jsonx.IsNull(env.id) {
		textError(w, "Initialize request must include an ID", http.StatusBadRequest)
		return
	}
	c := h.newConnection(w)
	if c == nil {
		return
	}
	c.initID = append([]byte(nil), env.id...)
	peer := Peer{ConnectionID: c.id, Transport: "http", RemoteAddr: r.RemoteAddr, Header: r.Header.Clone()}
	err := c.start(peer)
	if err == nil {
		err = c.awaitInitialize(r.Context(), append(oneLine(body), '\n'))
	}
	if err == nil && !h.register(c) {
		err = errShuttingDown
	}
	if err != nil {
		c.shutdown(fmt.Errorf("initialize failed: %w", err))
		if r.Context().Err() != nil {
			return // the client went away
		}
		data := jsonx.AppendString(nil, err.Error())
		jsonAnswer(w, errorLine(env.id, -32603, "Initialize failed", data), http.StatusInternalServerError)
		return
	}
	h.log.Info("acpnet: connection opened", "connection", c.id, "transport", "http", "remote", r.RemoteAddr)
	w.Header().Set(HeaderConnectionID, c.id)
	jsonAnswer(w, c.initBody, http.StatusOK)
}

// post hands one client message to the agent and answers 202; its answer,
// if any, comes on an event stream (TR-3, TR-4).
func (c *serverConn) post(w http.ResponseWriter, r *http.Request, body []byte, env *envelope) {
	maxID := c.h.opts.MaxIDLength
	header := r.Header.Get(HeaderSessionID)
	if env.jsonrpc2 && env.isResponse() && env.hasResult != env.hasError {
		// An answer to one of the agent's requests: if that request went
		// out on a session stream, a session id sent with the answer must
		// be that session's; one left out is tolerated (TR-4).
		if key, ok := idKey(env.id); ok {
			c.mu.Lock()
			sid, known := c.responseRoutes[key]
			if known && sid != "" && header != "" && header != sid {
				c.mu.Unlock()
				textError(w, "Mismatched Acp-Session-Id", http.StatusBadRequest)
				return
			}
			delete(c.responseRoutes, key)
			c.mu.Unlock()
		}
		c.deliver(w, r, body)
		return
	}
	if (sessionScoped[env.method] || env.hasSessionID) && header == "" {
		textError(w, "Missing Acp-Session-Id", http.StatusBadRequest)
		return
	}
	if header != "" && env.hasSessionID && header != env.sessionID {
		textError(w, "Mismatched Acp-Session-Id", http.StatusBadRequest)
		return
	}
	sid := header
	if sid == "" {
		sid = env.sessionID
	}
	if len(sid) > maxID {
		textError(w, fmt.Sprintf("Session ID exceeds maxIdLength (%d)", maxID), http.StatusBadRequest)
		return
	}
	if !env.isNotification() {
		if idLength(env.id) > maxID {
			textError(w, fmt.Sprintf("Request ID exceeds maxIdLength (%d)", maxID), http.StatusBadRequest)
			return
		}
		// Anything but a notification makes the agent answer: wait until
		// the client has read enough of its output to make room.
		c.mu.Lock()
		err := c.waitRoomLocked(r.Context())
		c.mu.Unlock()
		if err != nil {
			if r.Context().Err() == nil {
				textError(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
			}
			return
		}
	}
	if env.isRequest() {
		if key, ok := idKey(env.id); ok {
			c.mu.Lock()
			// A copy: the id aliases the body, which may be large.
			c.pendingRoutes[key] = route{sid: strings.Clone(sid), load: env.method == "session/load"}
			c.mu.Unlock()
		}
	}
	c.deliver(w, r, body)
}

// deliver queues the body for the agent and answers 202; a connection
// that holds MaxBufferedBytes of bodies its agent has not read yet
// refuses more with 503 (TR-18).
func (c *serverConn) deliver(w http.ResponseWriter, r *http.Request, body []byte) {
	line := append(oneLine(body), '\n')
	c.mu.Lock()
	if c.waiting > 0 && c.waiting+len(line) > c.h.opts.MaxBufferedBytes {
		c.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		textError(w, "Connection input is full", http.StatusServiceUnavailable)
		return
	}
	c.waiting += len(line)
	c.mu.Unlock()
	err := c.in.send(r.Context(), line)
	c.mu.Lock()
	c.waiting -= len(line)
	c.mu.Unlock()
	switch {
	case err == nil:
		// At once, and whole (no body, so no chunked end to follow): the
		// agent may answer on an event stream before this handler returns.
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusAccepted)
		_ = http.NewResponseController(w).Flush()
	case r.Context().Err() != nil:
		// The client gave up; nothing was delivered.
	default:
		textError(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
	}
}

// serveGet opens an event stream: the connection's, or with
// Acp-Session-Id a session's (TR-5).
func (h *Handler) serveGet(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		textError(w, "Not Acceptable", http.StatusNotAcceptable)
		return
	}
	c := h.connectionOf(w, r.Header.Get(HeaderConnectionID))
	if c == nil {
		return
	}
	mb, code, msg := c.acquire(r.Header.Get(HeaderSessionID))
	if mb == nil {
		textError(w, msg, code)
		return
	}
	c.stream(w, r, mb)
}

// acceptsEventStream: Accept names text/event-stream (a wildcard does not
// count, as for the TypeScript server).
func acceptsEventStream(accept []string) bool {
	for _, a := range accept {
		for part := range strings.SplitSeq(a, ",") {
			media, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && media == mediaEventStream {
				return true
			}
		}
	}
	return false
}

// stream writes mb's messages as server-sent events until the stream or
// the request ends (TR-5, TR-6, TR-10).
func (c *serverConn) stream(w http.ResponseWriter, r *http.Request, mb *mailbox) {
	defer c.release(mb)
	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", mediaEventStream)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	if r.ProtoMajor == 1 {
		hdr.Set("Connection", "keep-alive")
	}
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	c.mu.Lock()
	mb.stop = func() { _ = rc.SetWriteDeadline(time.Now().Add(shutdownWriteGrace)) }
	c.mu.Unlock()
	keepAlive := time.NewTicker(c.h.opts.KeepAlive)
	defer keepAlive.Stop()
	var lines [][]byte
	for {
		var end bool
		lines, end = c.take(mb, lines[:0])
		if len(lines) > 0 {
			for i, line := range lines {
				if writeEvent(w, line) != nil {
					return
				}
				lines[i] = nil
			}
			if rc.Flush() != nil {
				return
			}
			continue
		}
		if end {
			return
		}
		select {
		case <-mb.wake:
		case <-keepAlive.C:
			if _, err := w.Write(sseKeepAlive); err != nil || rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// shutdownWriteGrace is how long a stream's write may still take once its
// connection shut down: enough to finish, not to wait on a client that
// reads nothing.
const shutdownWriteGrace = time.Second

// writeEvent writes one message as an event (TR-6).
func writeEvent(w io.Writer, line []byte) error {
	if _, err := w.Write(sseDataPrefix); err != nil {
		return err
	}
	if bytes.IndexByte(line, '\r') >= 0 {
		line = oneLine(append([]byte(nil), line...))
	}
	if _, err := w.Write(line); err != nil {
		return err
	}
	_, err := w.Write(sseEventEnd)
	return err
}

// serveDelete ends a connection and its sessions (TR-8).
func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) {
	c := h.connectionOf(w, r.Header.Get(HeaderConnectionID))
	if c == nil {
		return
	}
	c.shutdown(errDeleted)
	w.WriteHeader(http.StatusAccepted)
}
