package acpnet

import (
	"errors"
	"log/slog"
	"net"
	"sync"

	"acpkit.dev/acpsdk"
)

// TCPServer serves agents over raw TCP: each accepted socket carries the
// stdio framing, one JSON message per line with no handshake, as
// `copilot --acp --port N` does (TR-16), and gets its own agent from the
// AgentFunc. The socket is the agent's stream, so every bound of the
// agent's acpsdk.Conn applies as on stdio.
type TCPServer struct {
	newAgent AgentFunc
	log      *slog.Logger

	mu     sync.Mutex
	ln     net.Listener
	conns  map[*acpsdk.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewTCPServer returns a TCPServer starting agents with newAgent; logger
// may be nil.
func NewTCPServer(newAgent AgentFunc, logger *slog.Logger) *TCPServer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &TCPServer{newAgent: newAgent, log: logger, conns: make(map[*acpsdk.Conn]struct{})}
}

// Serve accepts connections on ln until Close; it then returns nil, and
// any other accept error as is. Listen on a loopback address unless the
// agent is meant to be reached from elsewhere (TR-17): the socket has no
// authentication.
func (s *TCPServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.serve(nc)
	}
}

// serve starts one socket's agent and ends the socket with it.
func (s *TCPServer) serve(nc net.Conn) {
	peer := Peer{Transport: "tcp", RemoteAddr: nc.RemoteAddr().String()}
	gated := &gatedConn{Conn: nc, open: make(chan struct{})}
	conn := s.newAgent(gated, peer)
	close(gated.open)
	if conn == nil {
		_ = nc.Close()
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.conns[conn] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.log.Info("acpnet: connection opened", "transport", "tcp", "remote", peer.RemoteAddr)
	go func() {
		defer s.wg.Done()
		<-conn.Done()
		_ = conn.Close() // closes the socket, waits for the handlers
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.log.Info("acpnet: connection ended", "transport", "tcp", "remote", peer.RemoteAddr)
	}()
}

// Close stops accepting, closes every agent's connection (and so its
// socket) and waits for them.
func (s *TCPServer) Close() error {
	s.mu.Lock()
	s.closed = true
	ln := s.ln
	conns := make([]*acpsdk.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
	s.wg.Wait()
	return err
}

// gatedConn holds reads back until open is closed: the AgentFunc has
// returned, so what it wires after building its side is in place before
// the first message is handled, as over HTTP and WebSocket, where the
// first message is handed over only then.
type gatedConn struct {
	net.Conn
	open chan struct{}
}

func (g *gatedConn) Read(b []byte) (int, error) {
	<-g.open
	return g.Conn.Read(b)
}
