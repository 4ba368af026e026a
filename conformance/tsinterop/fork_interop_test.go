package tsinterop_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen/v1unstable"
)

// The fork flow (README.md): session/fork and session/set_title between
// the TypeScript SDK's unstable v1 entrypoint and acpsdk's generic sides
// over the v1 unstable surface, both directions.

// forkSummary is the JSON line fork_client.mjs prints.
type forkSummary struct {
	OK     bool     `json:"ok"`
	Errors []string `json:"errors"`
	Agent  *struct {
		Name  string `json:"name"`
		Fork  bool   `json:"fork"`
		Title bool   `json:"title"`
	} `json:"agent"`
	SessionID string `json:"sessionId"`
	ForkID    string `json:"forkId"`
	Titles    []struct {
		SessionID string  `json:"sessionId"`
		Title     *string `json:"title"`
	} `json:"titles"`
	StoredTitle     *string `json:"storedTitle"`
	UnknownForkCode any     `json:"unknownForkCode"`
	AgentExit       any     `json:"agentExit"`
}

// runForkClient runs fork_client.mjs against the agent command.
func runForkClient(t *testing.T, agent ...string) forkSummary {
	t.Helper()
	s, err, stderr := runNodeSummary[forkSummary](t, "fork_client.mjs", append([]string{"--"}, agent...)...)
	require.NoError(t, err, "fork_client.mjs failed; stderr:\n%s", stderr)
	return s
}

// requireForkFlow asserts a fork_client.mjs run against an agent that
// behaves as fork_agent.mjs does.
func requireForkFlow(t *testing.T, s forkSummary, agentName string) {
	t.Helper()
	require.True(t, s.OK, "errors: %q", s.Errors)
	require.NotNil(t, s.Agent)
	assert.Equal(t, agentName, s.Agent.Name)
	assert.True(t, s.Agent.Fork, "sessionCapabilities.fork advertised")
	assert.True(t, s.Agent.Title, "sessionCapabilities.title advertised")
	require.NotEmpty(t, s.SessionID)
	require.NotEmpty(t, s.ForkID)
	assert.NotEqual(t, s.SessionID, s.ForkID, "a fork is a new session")
	require.Len(t, s.Titles, 1, "one session_info_update, received before set_title's answer")
	assert.Equal(t, s.ForkID, s.Titles[0].SessionID)
	require.NotNil(t, s.Titles[0].Title)
	assert.Equal(t, "forked from the TypeScript client", *s.Titles[0].Title)
	require.NotNil(t, s.StoredTitle, "set_title's response carries the stored title")
	assert.Equal(t, "forked from the TypeScript client", *s.StoredTitle)
	assert.Equal(t, float64(acpsdk.CodeResourceNotFound), s.UnknownForkCode)
	assert.Equal(t, float64(0), s.AgentExit, "the agent exits 0 when its stdin closes")
}

// TestTSClientTSAgentFork: the TypeScript pair, the baseline that shows
// the peers themselves follow the fork flow.
func TestTSClientTSAgentFork(t *testing.T) {
	requireForkFlow(t, runForkClient(t, "node", "fork_agent.mjs"), "acpkit-tsinterop-fork-agent")
}

// TestTSClientGoAgentFork: the TypeScript SDK's unstable client drives a Go
// agent written against the v1 unstable surface (goforkagent, strict mode).
func TestTSClientGoAgentFork(t *testing.T) {
	peerDir(t)
	bin := filepath.Join(t.TempDir(), "goforkagent")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "acpkit.dev/conformance/tsinterop/goforkagent").CombinedOutput()
	require.NoError(t, err, "go build goforkagent:\n%s", out)
	requireForkFlow(t, runForkClient(t, bin), "acpkit-tsinterop-goforkagent")
}

// forkClient is a v1unstable.Client that records session_info_update titles.
type forkClient struct {
	mu     sync.Mutex
	titles []string
}

func (c *forkClient) SessionUpdate(_ context.Context, n *v1unstable.SessionNotification) error {
	if u, ok := n.Update.(*v1unstable.SessionUpdateSessionInfoUpdate); ok && u.Title != nil {
		c.mu.Lock()
		c.titles = append(c.titles, string(n.SessionID)+": "+*u.Title)
		c.mu.Unlock()
	}
	return nil
}

func (c *forkClient) RequestPermission(context.Context, *v1unstable.RequestPermissionRequest) (*v1unstable.RequestPermissionResponse, error) {
	return &v1unstable.RequestPermissionResponse{Outcome: &v1unstable.RequestPermissionOutcomeCancelled{}}, nil
}

func (c *forkClient) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.titles...)
}

// TestGoClientTSAgentFork: acpsdk's client side over the v1 unstable
// surface, in strict mode, drives the TypeScript SDK's unstable agent:
// session/fork and session/set_title are typed calls, refused before the
// agent advertised them and sent after; session/status, which the agent
// does not advertise, is refused without reaching the wire.
func TestGoClientTSAgentFork(t *testing.T) {
	dir := peerDir(t)
	cmd := exec.Command("node", filepath.Join(dir, "fork_agent.mjs"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var mu sync.Mutex
	var sent []string
	tap := func(d acpsdk.Direction, line []byte) {
		if d == acpsdk.DirectionOut {
			mu.Lock()
			sent = append(sent, string(line))
			mu.Unlock()
		}
	}
	fc := &forkClient{}
	side, err := acpsdk.StartAgentOf(v1unstable.Surface, cmd, v1unstable.Client(fc), &acpsdk.SideOptions{Strict: true, Options: acpsdk.Options{Tap: tap}})
	require.NoError(t, err)
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = side.Close()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	ctx := t.Context()
	a := side.Agent()

	_, err = a.ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: "s", Cwd: "/"})
	require.ErrorIs(t, err, acpsdk.ErrNotAdvertised, "before initialize nothing is advertised")

	init, err := a.Initialize(ctx, &v1unstable.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	require.NotNil(t, init.AgentCapabilities.SessionCapabilities.Fork)
	ns, err := a.NewSession(ctx, &v1unstable.NewSessionRequest{Cwd: "/", McpServers: []v1unstable.McpServer{}})
	require.NoError(t, err)
	fork, err := a.ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: ns.SessionID, Cwd: "/"})
	require.NoError(t, err)
	require.NotEqual(t, ns.SessionID, fork.SessionID)
	titled, err := a.SetSessionTitle(ctx, &v1unstable.SetSessionTitleRequest{SessionID: fork.SessionID, Title: "forked from Go"})
	require.NoError(t, err)
	assert.Equal(t, "forked from Go", titled.Title)
	// The agent sent the update before its answer; acpsdk handles a
	// notification before the response that follows it (SDK-7).
	assert.Equal(t, []string{string(fork.SessionID) + ": forked from Go"}, fc.seen())

	_, err = a.ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: "no-such-session", Cwd: "/"})
	require.ErrorIs(t, err, acpsdk.ErrResourceNotFound)

	_, err = a.SessionStatus(ctx, &v1unstable.SessionStatusRequest{SessionID: fork.SessionID})
	ce, ok := errors.AsType[*acpsdk.CapabilityError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, acpsdk.CapabilityError{Method: v1unstable.MethodSessionStatus, Requires: "agentCapabilities.sessionCapabilities.status"}, *ce)
	mu.Lock()
	for _, line := range sent {
		assert.NotContains(t, line, `"session/status"`, "a refused call is not sent")
	}
	nFork := strings.Count(strings.Join(sent, "\n"), `"method":"session/fork"`)
	mu.Unlock()
	assert.Equal(t, 2, nFork, "the refused fork before initialize was not sent")

	require.NoError(t, side.Close())
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		exited = true
		require.NoError(t, err, "fork_agent.mjs exit; stderr:\n%s", stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("fork_agent.mjs did not exit within 10s of stdin closing; stderr:\n%s", stderr.String())
	}
}
