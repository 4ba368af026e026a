package adapter

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/acpnet"
	referenceagent "acpkit.dev/conformance/refagent"
	"acpkit.dev/internal/acpnettest"
)

// serveReference serves the reference agent over transport until the test
// ends and returns the URL to dial.
func serveReference(t *testing.T, transport string) string {
	return acpnettest.Serve(t, func(ctx context.Context, w io.Writer) error {
		return referenceagent.Listen(ctx, referenceagent.DefaultOptions(), "127.0.0.1:0", transport, w, slog.New(slog.DiscardHandler))
	})
}

// TestLT3_SP9_MCP2_WithDialerDrivesAServedRuntime: with WithDialer a
// session runs over a connection to the reference agent served over each
// transport: the command is not resolved (an empty one starts), there is
// no pid, MCP servers are not even read, the turn completes with the
// agent's words, and StopSession ends the connection.
func TestLT3_SP9_MCP2_WithDialerDrivesAServedRuntime(t *testing.T) {
	for _, transport := range []string{referenceagent.TransportHTTP, referenceagent.TransportWS, referenceagent.TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			url := serveReference(t, transport)
			var conns []io.ReadWriteCloser
			var mu sync.Mutex
			a, err := New(nil, WithDialer(func(ctx context.Context) (io.ReadWriteCloser, error) {
				c, err := acpnet.Dial(ctx, url, nil)
				if err == nil {
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
				return c, err
			}))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := a.StartSession(ctx, StartParams{
				WorkspacePath: t.TempDir(),
				Agent:         AgentConfig{Kind: KindName, Command: ""},
				MCPConfigPath: "/nonexistent/mcp.json", // never read
			})
			require.NoError(t, err)
			assert.Equal(t, "sess-1", s.ID)
			assert.Empty(t, s.AgentPID, "a served runtime has no process")
			var seen []string
			res, err := a.RunTurn(ctx, s, TurnParams{Prompt: "hi", OnEvent: func(e Event) {
				seen = append(seen, string(e.Type)+": "+e.Message)
			}})
			require.NoError(t, err)
			assert.Equal(t, EventTurnCompleted, res.Outcome)
			all := strings.Join(seen, "\n")
			assert.Contains(t, all, "You said: hi")
			assert.Contains(t, all, "tool servers", "no MCP server reaches a served runtime")
			require.NoError(t, a.StopSession(context.Background(), s))
			mu.Lock()
			require.Len(t, conns, 1)
			mu.Unlock()
		})
	}
}

// TestSP4_WithDialerFailureIsPortExit: a runtime that cannot be reached is
// port_exit with the dial's own message ([acpkit]).
func TestSP4_WithDialerFailureIsPortExit(t *testing.T) {
	a, err := New(nil, WithDialer(func(ctx context.Context) (io.ReadWriteCloser, error) {
		return acpnet.Dial(ctx, "tcp://127.0.0.1:1", nil)
	}))
	require.NoError(t, err)
	_, err = a.StartSession(context.Background(), StartParams{WorkspacePath: t.TempDir(), Agent: AgentConfig{Kind: KindName}})
	require.Error(t, err)
	assert.Equal(t, KindPortExit, KindOf(err))
	assert.Contains(t, err.Error(), "failed to connect to the served runtime")
}
