// Command goagent is the Go twin of agent.mjs: a deterministic ACP agent on
// acpsdk, driven by the TypeScript SDK's client (client.mjs) in the interop
// tests. It speaks ACP over stdin/stdout, logs to stderr, and exits 0 when
// stdin closes. When ACP_INTEROP_STORE names a directory, sessions are kept
// there too, so a later process can answer session/load.
//
// With --listen ADDR it serves the same agent over the network instead,
// as serve_agent.mjs serves agent.mjs: Streamable HTTP and WebSocket on
// /acp (acpkit.dev/acpsdk/acpnet), one agent per connection, the sessions
// shared; /broken serves an agent that never starts. It prints
// "listening on http://ADDR/acp" and serves until stdin closes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", agentName)
	storeDir := os.Getenv("ACP_INTEROP_STORE")
	if storeDir != "" {
		if err := os.MkdirAll(storeDir, 0o700); err != nil {
			log.Error("store", "err", err)
			os.Exit(1)
		}
	}
	if len(os.Args) == 3 && os.Args[1] == "--listen" {
		if err := listen(log, newStore(storeDir), os.Args[2]); err != nil {
			log.Error("exit", "err", err)
			os.Exit(1)
		}
		return
	}
	if err := serve(log, newStore(storeDir), os.Stdin, os.Stdout); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

// serve runs one connection, reading the client's messages from r and
// writing to w, until r ends; it returns once every handler has returned.
func serve(log *slog.Logger, st *store, r io.Reader, w io.Writer) error {
	a := newAgent(log, st)
	// The side starts reading inside NewAgentSide, and its dispatch of
	// initialize reads fields NewAgentSide assigns only after starting the
	// reader (a data race in acpsdk as of 61e143a). Holding reads back until
	// the constructor has returned orders the two.
	in := &gatedReader{r: r, open: make(chan struct{})}
	// Strict: a call the client's initialize did not allow is refused
	// before it is sent; this agent only makes baseline calls, so the
	// interop tests also show strict mode lets those through.
	side := acpsdk.NewAgentSide(in, w, a, &acpsdk.SideOptions{
		Options: acpsdk.Options{Logger: log},
		Strict:  true,
	})
	a.setClient(side.Client())
	close(in.open)
	conn := side.Conn()
	<-conn.Done()
	err := conn.Err()
	// At the end of stdin the connection cancels running handlers; Close
	// waits for them to return, so their sessions are saved before exit.
	// Flush first: what is already queued still reaches a client that only
	// half-closed the pipe.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = conn.Flush(ctx)
	if cerr := conn.Close(); cerr != nil {
		log.Warn("close", "err", cerr)
	}
	if err != nil && !errors.Is(err, acpsdk.ErrClosed) {
		return err
	}
	return nil
}

// gatedReader blocks reads until open is closed. Close passes through, so
// the connection can still unblock a pending read by closing the stream.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

func (g *gatedReader) Close() error {
	if c, ok := g.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// listen serves the agent over Streamable HTTP and WebSocket on addr until
// stdin ends.
func listen(log *slog.Logger, st *store, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := acpnet.NewHandler(func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
		a := newAgent(log, st)
		side := acpsdk.NewAgentSide(stream, stream, a, &acpsdk.SideOptions{
			Options: acpsdk.Options{Logger: log},
			Strict:  true,
		})
		a.setClient(side.Client())
		return side.Conn()
	}, &acpnet.ServerOptions{Logger: log})
	broken := acpnet.NewHandler(func(io.ReadWriteCloser, acpnet.Peer) *acpsdk.Conn { return nil }, nil)
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	mux.Handle("/broken", broken)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(os.Stdout, "listening on http://%s/acp\n", ln.Addr()); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = h.Close()
	_ = broken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
