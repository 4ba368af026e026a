// Command goagent is the Go twin of agent.mjs: a deterministic ACP agent on
// acpsdk, driven by the TypeScript SDK's client (client.mjs) in the interop
// tests. It speaks ACP over stdin/stdout, logs to stderr, and exits 0 when
// stdin closes. When ACP_INTEROP_STORE names a directory, sessions are kept
// there too, so a later process can answer session/load.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"acpkit.dev/acpsdk"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", agentName)
	if err := run(log, os.Getenv("ACP_INTEROP_STORE")); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

// run serves one connection on stdio until the client closes stdin.
func run(log *slog.Logger, storeDir string) error {
	if storeDir != "" {
		if err := os.MkdirAll(storeDir, 0o700); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	a := newAgent(log, newStore(storeDir))
	// Strict: a call the client's initialize did not allow is refused
	// before it is sent; this agent only makes baseline calls, so the
	// interop tests also show strict mode lets those through.
	side := acpsdk.NewAgentSide(os.Stdin, os.Stdout, a, &acpsdk.SideOptions{
		Options: acpsdk.Options{Logger: log},
		Strict:  true,
	})
	a.setClient(side.Client())
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
