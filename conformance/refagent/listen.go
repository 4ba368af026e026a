package refagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
)

// The transports Listen serves (--transport).
const (
	TransportHTTP = "http" // Streamable HTTP (and WebSocket) on /acp; the URL printed is http://
	TransportWS   = "ws"   // the same endpoint; the URL printed is ws://
	TransportTCP  = "tcp"  // newline-delimited JSON over TCP; tcp://
)

// Listen serves the reference agent on addr (host:port; port 0 picks a
// free one; no host means loopback, see acpnet.Listen) over transport until ctx ends, one agent per connection, each
// behaving as opts say. Its first line on stdout is "listening on URL",
// the URL a client dials: http://HOST:PORT/acp, ws://HOST:PORT/acp or
// tcp://HOST:PORT. What needs a process does not apply: exit=CODE and
// --die-on-garbage end that connection, not the server.
func Listen(ctx context.Context, opts Options, addr, transport string, stdout io.Writer, log *slog.Logger) error {
	var scheme, path string
	switch transport {
	case TransportHTTP, TransportWS:
		scheme, path = transport, "/acp"
	case TransportTCP:
		scheme = transport
	default:
		return fmt.Errorf("%w: --transport must be http, ws or tcp, not %q", ErrUsage, transport)
	}
	ln, err := acpnet.Listen(addr)
	if err != nil {
		return fmt.Errorf("refagent: %w", err)
	}
	var wg sync.WaitGroup
	newAgent := func(stream io.ReadWriteCloser, peer acpnet.Peer) *acpsdk.Conn {
		log := log.With("transport", peer.Transport, "remote", peer.RemoteAddr)
		var conn *acpsdk.Conn
		// No message reaches the agent before this function returns, so
		// conn is set before exit can run.
		end := func(int) { go conn.Close() }
		a, stop := start(ctx, opts, stream, stream, log, end)
		conn = a.t.conn
		wg.Go(func() {
			<-conn.Done()
			stop()
		})
		return conn
	}
	serve, shutdown := serveHTTP(ln, newAgent, log)
	if transport == TransportTCP {
		serve, shutdown = serveTCP(ln, newAgent, log)
	}
	served := make(chan error, 1)
	go func() { served <- serve() }()
	if _, err := fmt.Fprintf(stdout, "listening on %s://%s%s\n", scheme, ln.Addr(), path); err != nil {
		shutdown()
		<-served
		return err
	}
	log.Info("listening", "transport", transport, "address", ln.Addr().String())
	var serr error
	select {
	case <-ctx.Done():
	case serr = <-served:
	}
	shutdown()
	if serr == nil {
		serr = <-served
	}
	wg.Wait()
	return serr
}

// serveHTTP serves Streamable HTTP and WebSocket on /acp.
func serveHTTP(ln net.Listener, newAgent acpnet.AgentFunc, log *slog.Logger) (serve func() error, shutdown func()) {
	h := acpnet.NewHandler(newAgent, &acpnet.ServerOptions{Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}, func() {
			_ = h.Close() // its streams are long-lived: Shutdown would wait for them
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			// Shutdown leaves a connection that has not sent a request
			// yet for seconds (a client's dial its request no longer
			// needed): close what is left.
			_ = srv.Close()
		}
}

// serveTCP serves newline-delimited JSON over TCP.
func serveTCP(ln net.Listener, newAgent acpnet.AgentFunc, log *slog.Logger) (serve func() error, shutdown func()) {
	srv := acpnet.NewTCPServer(newAgent, log)
	return func() error { return srv.Serve(ln) }, func() { _ = srv.Close() }
}
