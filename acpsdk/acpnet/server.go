package acpnet

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"acpkit.dev/acpsdk"
)

// The headers and media types of ACP's Streamable HTTP transport.
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
	mediaJSON          = "application/json"
	mediaEventStream   = "text/event-stream"
)

// Defaults of [ServerOptions]: the TypeScript SDK's (TR-18).
const (
	DefaultMaxBufferedBytes        = 64 << 20
	DefaultMaxOutputStall          = 60 * time.Second
	DefaultMaxUnreadSessionStreams = 1024
	DefaultMaxIDLength             = 1024
	DefaultMaxMessageBytes         = 16 << 20
	DefaultMaxConnections          = 1024
	DefaultKeepAlive               = 15 * time.Second
)

// Peer describes the client of a connection being accepted.
type Peer struct {
	// ConnectionID is the connection's Acp-Connection-Id ("" over TCP).
	ConnectionID string
	// Transport is "http", "websocket" or "tcp".
	Transport string
	// RemoteAddr is the client's network address.
	RemoteAddr string
	// Header is the initialize POST's or the upgrade request's header (nil
	// over TCP); it may hold credentials, so do not log it whole.
	Header http.Header
}

// AgentFunc starts the agent end of one accepted connection: it builds an
// acpsdk side (or a bare acpsdk.Conn) reading and writing stream, and
// returns its Conn without waiting for it. It is called once per
// connection, so each connection gets an agent of its own. No message
// reaches the Conn before AgentFunc returns, so it may finish wiring its
// agent (hand it the side it built) after building the side. The
// transport owns the Conn from then on: it closes it when the connection
// ends, and ends the connection when the Conn is closed.
//
//	func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
//		return acpsdk.NewAgentSide(stream, stream, &myAgent{}, nil).Conn()
//	}
type AgentFunc func(stream io.ReadWriteCloser, peer Peer) *acpsdk.Conn

// ServerOptions configure a [Handler]. The zero value gives the defaults,
// which are the TypeScript SDK's.
type ServerOptions struct {
	// AllowedOrigins lists the Origin header values accepted, as
	// "scheme://host[:port]" (compared without regard to case). A request
	// or upgrade that carries any other Origin is refused 403 (TR-17); a
	// request without one — every client that is not a browser — is not
	// affected. Empty: every Origin is refused.
	AllowedOrigins []string
	// AllowedHosts, when set, lists the Host header values accepted (a
	// name, or name:port); a request for any other host is refused 403,
	// which defeats DNS rebinding. Empty: any Host.
	AllowedHosts []string
	// Authorize, when set, runs before anything else on every request
	// (and before the WebSocket upgrade), before any connection is looked
	// up. Returning false refuses the request; Authorize must then have
	// written the response (say 401 with a WWW-Authenticate header).
	// Connection ids are not credentials: authorize every request.
	Authorize func(w http.ResponseWriter, r *http.Request) bool
	// MaxBufferedBytes bounds a connection's output waiting for a client
	// to read it: over HTTP, what its event streams hold; the agent's
	// writes then wait (default 64 MiB). It also bounds the POST bodies of
	// one connection waiting for the agent to read them (beyond it: 503).
	MaxBufferedBytes int
	// MaxOutputStall closes a connection whose client reads none of its
	// output for this long while it is over MaxBufferedBytes, or while a
	// WebSocket write waits (default 60 s).
	MaxOutputStall time.Duration
	// MaxUnreadSessionStreams bounds the session streams of one
	// connection that hold messages while no client reads them; one more
	// closes the connection (default 1,024).
	MaxUnreadSessionStreams int
	// MaxIDLength bounds a request id or a session id, in bytes (default
	// 1,024): over HTTP a longer one is refused 400, over WebSocket it
	// closes the socket 1008, and an agent handing one out closes the
	// connection.
	MaxIDLength int
	// MaxMessageBytes bounds one inbound message: a POST body (beyond it:
	// 413) or a WebSocket message (close 1008). Default 16 MiB.
	MaxMessageBytes int
	// MaxConnections bounds the connections served at once (default
	// 1,024); initialize or an upgrade beyond it is refused 503.
	MaxConnections int
	// KeepAlive is how often an idle event stream gets a comment
	// (default 15 s).
	KeepAlive time.Duration
	// DisableWebSocket answers WebSocket upgrades 426 instead of serving
	// them.
	DisableWebSocket bool
	// Logger receives the transport's records (connections opened and
	// ended, limits broken); nil discards them. No record holds a header's
	// value, so Authorization and Cookie are never logged.
	Logger *slog.Logger
}

func (o *ServerOptions) withDefaults() ServerOptions {
	var v ServerOptions
	if o != nil {
		v = *o
	}
	if v.MaxBufferedBytes <= 0 {
		v.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if v.MaxOutputStall <= 0 {
		v.MaxOutputStall = DefaultMaxOutputStall
	}
	if v.MaxUnreadSessionStreams <= 0 {
		v.MaxUnreadSessionStreams = DefaultMaxUnreadSessionStreams
	}
	if v.MaxIDLength <= 0 {
		v.MaxIDLength = DefaultMaxIDLength
	}
	if v.MaxMessageBytes <= 0 {
		v.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if v.MaxConnections <= 0 {
		v.MaxConnections = DefaultMaxConnections
	}
	if v.KeepAlive <= 0 {
		v.KeepAlive = DefaultKeepAlive
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	return v
}

// Handler serves ACP agents over Streamable HTTP and WebSocket on one
// endpoint (conventionally /acp): POST, GET (an event stream, or a
// WebSocket upgrade) and DELETE, as the TypeScript SDK's AcpServer does
// (TR-1…TR-15). Each connection, opened by an initialize POST or an
// upgrade, gets its own agent from the AgentFunc.
//
// Close it before shutting the http.Server down: event streams and
// WebSocket connections are long-lived, so http.Server.Shutdown would
// wait for them (srv.RegisterOnShutdown(func() { h.Close() }) does it).
type Handler struct {
	newAgent AgentFunc
	opts     ServerOptions
	log      *slog.Logger

	mu     sync.Mutex
	conns  map[string]*serverConn   // live HTTP connections, by id
	all    map[*serverConn]struct{} // every connection not yet retired
	closed bool
}

// NewHandler returns a Handler serving the agents newAgent starts. opts
// may be nil.
func NewHandler(newAgent AgentFunc, opts *ServerOptions) *Handler {
	o := opts.withDefaults()
	return &Handler{
		newAgent: newAgent,
		opts:     o,
		log:      o.Logger,
		conns:    make(map[string]*serverConn),
		all:      make(map[*serverConn]struct{}),
	}
}

// ServeHTTP serves one request: the security checks first (TR-17), then
// by method (TR-1…TR-9, TR-13).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet:
		if isUpgrade(r) {
			h.serveWebSocket(w, r)
			return
		}
		h.serveGet(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		textError(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// admit runs the checks every request passes first: Host, Origin, then
// the Authorize hook (TR-17).
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	if len(h.opts.AllowedHosts) > 0 && !hostAllowed(r.Host, h.opts.AllowedHosts) {
		h.log.Warn("acpnet: request refused", "reason", "host not allowed", "remote", r.RemoteAddr)
		textError(w, "Forbidden: Host not allowed", http.StatusForbidden)
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, h.opts.AllowedOrigins) {
		h.log.Warn("acpnet: request refused", "reason", "origin not allowed", "remote", r.RemoteAddr)
		textError(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return false
	}
	if h.opts.Authorize != nil && !h.opts.Authorize(w, r) {
		return false
	}
	return true
}

func originAllowed(origin string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

func hostAllowed(host string, allowed []string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	for _, a := range allowed {
		if strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Close ends every connection (WebSocket ones with 1001) and waits for
// their agents to return. Later requests are answered as for an unknown
// connection, and initialize with 503.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	all := make([]*serverConn, 0, len(h.all))
	for c := range h.all {
		all = append(all, c)
	}
	h.mu.Unlock()
	for _, c := range all {
		c.shutdown(errShuttingDown)
	}
	for _, c := range all {
		<-c.gone
	}
	return nil
}

// newConnection makes a connection counted against MaxConnections, or
// answers 503 (TR-18).
func (h *Handler) newConnection(w http.ResponseWriter) *serverConn {
	c := newServerConn(h)
	if !h.reserve(c) {
		textError(w, "Too many connections", http.StatusServiceUnavailable)
		return nil
	}
	return c
}

// reserve counts a new connection against MaxConnections.
func (h *Handler) reserve(c *serverConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.all) >= h.opts.MaxConnections {
		return false
	}
	h.all[c] = struct{}{}
	return true
}

// register makes an initialized HTTP connection reachable by its id.
func (h *Handler) register(c *serverConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conns[c.id] = c
	return true
}

// unlist makes an ending connection unreachable by its id.
func (h *Handler) unlist(c *serverConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns[c.id] == c {
		delete(h.conns, c.id)
	}
}

// release forgets a retired connection.
func (h *Handler) release(c *serverConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.all, c)
}

// lookup finds a live HTTP connection.
func (h *Handler) lookup(id string) *serverConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[id]
}

// newConnectionID returns a random UUID (version 4), as the TypeScript
// server's ids are. It names a connection; it authorizes nothing.
func newConnectionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// textError answers with a plain-text body, as the TypeScript server does.
func textError(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}

// jsonAnswer answers with a JSON body.
func jsonAnswer(w http.ResponseWriter, body []byte, code int) {
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
