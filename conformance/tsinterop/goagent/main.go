// Command goagent is the Go twin of agent.mjs: a deterministic ACP agent on
// acpsdk, driven by the TypeScript SDK's client (client.mjs) in the interop
// tests. It speaks ACP over stdin/stdout, logs to stderr, and exits 0 when
// stdin closes. When ACP_INTEROP_STORE names a directory, sessions are kept
// there too, so a later process can answer session/load.
package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"acpkit.dev/acpsdk"
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
