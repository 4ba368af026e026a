package check

import (
	"context"
	"fmt"
	"time"

	"acpkit.dev/acpsdk/acpnet"
)

// Dial connects to the agent served at t.URL (acpsdk/acpnet: Streamable
// HTTP, WebSocket or TCP by the URL's scheme) and returns a Session over
// the connection, as Launch returns one over a process's pipes: each check
// gets a fresh connection, and so a fresh agent. The session has no
// process: its stdin is the connection, whose close ends it (over HTTP,
// with DELETE); checks that need a process are skipped before this.
func Dial(t Target, timeout, exitBound time.Duration) (*Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stream, err := acpnet.Dial(ctx, t.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("check: connecting to %s: %w", t.URL, err)
	}
	s := &Session{
		Timeout:   timeout,
		ExitBound: exitBound,
		Cwd:       t.Dir,
		url:       t.URL,
		tr:        newTranscript(newMasker(t.Secrets)),
		stdin:     stream,
		stdout:    stream,
		changed:   make(chan struct{}),
		exited:    make(chan struct{}),
	}
	s.tr.notef("connected to %s", t.URL)
	s.helpers.Add(1)
	go func() {
		// The connection's end is this agent's: readStdout returns then.
		s.readStdout()
		close(s.exited)
	}()
	return s, nil
}
