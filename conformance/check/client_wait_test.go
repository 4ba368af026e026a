package check

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// TestClientWaitFor_LinesReadAfterTheClientWasReaped: a client that writes
// session/cancel and exits at once is reaped while that line may still be
// on its way through the scenario agent's stdin; WaitFor finds it there
// instead of reporting that the client ended the connection (the
// cancel.session-cancel breaker --exit-on-cancel was graded "skip" in 3 of
// 100 runs under -race).
func TestClientWaitFor_LinesReadAfterTheClientWasReaped(t *testing.T) {
	synctest.Test(t, linesReadAfterTheClientWasReaped)
}

func linesReadAfterTheClientWasReaped(t *testing.T) {
	c := reapedClient(time.Minute, time.Minute)

	type result struct {
		m   *Message
		err error
	}
	got := make(chan result, 1)
	go func() {
		m, err := c.WaitFor(context.Background(), 0, func(m *Message) bool {
			return m.IsNotification() && m.Method == gen.MethodSessionCancel
		})
		got <- result{m, err}
	}()
	synctest.Wait() // WaitFor has seen the exit and waits
	c.receive([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`))
	res := <-got
	require.NoError(t, res.err)
	assert.Equal(t, gen.MethodSessionCancel, res.m.Method)
}

// TestClientWaitFor_EndedOnceTheStdinEndsAfterTheExit: with the client
// reaped and nothing matching, the wait ends with ErrAgentClosed when the
// agent's stdin ends, not at the timeout.
func TestClientWaitFor_EndedOnceTheStdinEndsAfterTheExit(t *testing.T) {
	synctest.Test(t, endedOnceTheStdinEndsAfterTheExit)
}

func endedOnceTheStdinEndsAfterTheExit(t *testing.T) {
	c := reapedClient(time.Hour, time.Hour)
	c.keepAlive = true // the test has no agent to tell to exit
	got := make(chan error, 1)
	go func() {
		_, err := c.WaitFor(context.Background(), 0, func(*Message) bool { return false })
		got <- err
	}()
	synctest.Wait()
	select {
	case err := <-got:
		t.Fatalf("WaitFor ended before the agent's stdin did: %v", err)
	default:
	}
	c.stdinEnd("")
	assert.ErrorIs(t, <-got, ErrAgentClosed)
}

// TestClientWaitFor_ExitBoundWhenTheStdinStaysOpen: a process the client
// left behind may hold the agent's stdin open after the client exited; the
// wait then ends after the exit bound, as the connection's end.
func TestClientWaitFor_ExitBoundWhenTheStdinStaysOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 5 * time.Second
		c := reapedClient(time.Hour, bound)
		start := time.Now()
		_, err := c.WaitFor(context.Background(), 0, func(*Message) bool { return false })
		assert.ErrorIs(t, err, ErrAgentClosed)
		assert.Equal(t, bound, time.Since(start))
	})
}

// reapedClient is a run whose client was reaped, and its agent's
// connection, with no line read yet.
func reapedClient(timeout, exitBound time.Duration) *AgentConn {
	r := &ClientRun{
		g:       &clientGrading{cfg: ClientConfig{Timeout: timeout, ExitBound: exitBound}},
		tr:      newTranscript(nil),
		changed: make(chan struct{}),
	}
	r.mu.Lock()
	r.exited = true
	r.broadcastLocked()
	r.mu.Unlock()
	return &AgentConn{run: r}
}
