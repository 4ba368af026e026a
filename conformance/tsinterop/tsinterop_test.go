// Package tsinterop_test proves acpkit interoperates with the official ACP
// TypeScript SDK (@agentclientprotocol/sdk, pinned in package-lock.json):
// agent.mjs and client.mjs are peers written with that SDK, and these tests
// drive them with each other and with acpkit's Go peers. See README.md.
package tsinterop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/internal/npmtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sdkVersion is the TypeScript SDK release the peers are written against;
// package.json pins it exactly.
const sdkVersion = "2.4.0"

// The prompts client.mjs sends, in order.
const (
	promptPlain      = "hello from the TypeScript client"
	promptPermission = "please ask for permission first"
	promptSlow       = "take it slow until cancelled"
)

// summary is the JSON line client.mjs prints.
type summary struct {
	OK     bool     `json:"ok"`
	Errors []string `json:"errors"`
	Agent  *struct {
		Name            string `json:"name"`
		ProtocolVersion int    `json:"protocolVersion"`
		LoadSession     bool   `json:"loadSession"`
	} `json:"agent"`
	SessionID   string         `json:"sessionId"`
	Turns       []turnSummary  `json:"turns"`
	Updates     map[string]int `json:"updates"`
	StopReasons []string       `json:"stopReasons"`
	Permission  struct {
		Requests int `json:"requests"`
		Options  []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
		Selected *string `json:"selected"`
	} `json:"permission"`
	Replay *struct {
		Updates    map[string]int    `json:"updates"`
		Chunks     int               `json:"chunks"`
		Transcript []transcriptEntry `json:"transcript"`
	} `json:"replay"`
	// Updates that arrived between the flow's steps, by kind.
	OutOfTurn map[string]int `json:"outOfTurn"`
	// An exit code (float64 after decoding) or "signal NAME" per agent process.
	AgentExits []any `json:"agentExits"`
}

type turnSummary struct {
	Name         string         `json:"name"`
	StopReason   string         `json:"stopReason"`
	Updates      map[string]int `json:"updates"`
	Text         string         `json:"text"`
	ToolStatuses []string       `json:"toolStatuses"`
}

type transcriptEntry struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// peerDir returns this package's directory (go test runs in it) after
// checking that node and the pinned SDK are installed (npmtest.Node: -short
// or no node skips; a missing node_modules fails, `make deps` fixes it).
func peerDir(t *testing.T) string {
	t.Helper()
	npmtest.Node(t)
	dir, err := os.Getwd()
	require.NoError(t, err)
	pkg := filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")
	raw, err := os.ReadFile(pkg)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the TypeScript SDK is not installed in %s: run `make deps` (scripts/install-test-deps.sh runs npm ci there)", dir)
	}
	require.NoError(t, err)
	var meta struct {
		Version string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(raw, &meta), "decode %s", pkg)
	require.Equal(t, sdkVersion, meta.Version, "installed @agentclientprotocol/sdk is stale: run `make deps`")
	return dir
}

// runTSClient runs client.mjs against the agent command and decodes its
// summary line. It returns the summary, the client's exit error and stderr.
//
//lint:ignore ST1008 stderr trails the (summary, error) pair: it is only read to explain a failure.
func runTSClient(t *testing.T, agent ...string) (summary, error, string) {
	t.Helper()
	return runNodeSummary[summary](t, "client.mjs", append([]string{"--timeout-ms", "20000", "--"}, agent...)...)
}

// runNodeSummary runs one of this package's Node scripts with args and
// decodes the one summary line it must print. It returns the summary, the
// script's exit error and its stderr.
//
//lint:ignore ST1008 as runTSClient.
func runNodeSummary[T any](t *testing.T, script string, args ...string) (T, error, string) {
	t.Helper()
	dir := peerDir(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	// The script's agents inherit its stderr; bound the wait for that pipe
	// in case one outlives the script.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := bytes.Split(bytes.TrimRight(stdout.Bytes(), "\n"), []byte("\n"))
	require.Len(t, lines, 1, "%s must print exactly one summary line; stdout:\n%s\nstderr:\n%s", script, stdout.String(), stderr.String())
	var s T
	require.NoError(t, json.Unmarshal(lines[0], &s), "decode summary %q; stderr:\n%s", lines[0], stderr.String())
	return s, runErr, stderr.String()
}

// requireFlow asserts the summary of a complete client.mjs run against an
// agent process that behaves as README.md describes.
func requireFlow(t *testing.T, s summary, agentName string) {
	t.Helper()
	// Both agent processes exited by themselves, successfully, once their
	// stdin closed.
	requireFlowOf(t, s, agentName, []any{float64(0), float64(0)}, false)
}

// requireFlowOf is requireFlow with the agent exits expected: none for a
// served agent, which no client process starts.
//
// replayMayRace accepts a reload that saw no replay: the TypeScript SDK's
// own server answers session/load on the connection stream without
// waiting until the replay reached the session stream's reader (ours
// waits, TR-7), so its client can take the answer first.
func requireFlowOf(t *testing.T, s summary, agentName string, exits []any, replayMayRace bool) {
	t.Helper()
	require.True(t, s.OK, "errors: %q", s.Errors)
	require.Empty(t, s.Errors)
	require.NotNil(t, s.Agent)
	assert.Equal(t, agentName, s.Agent.Name)
	assert.Equal(t, 1, s.Agent.ProtocolVersion)
	assert.True(t, s.Agent.LoadSession)
	require.NotEmpty(t, s.SessionID)

	require.Len(t, s.Turns, 3)
	plain, perm, slow := s.Turns[0], s.Turns[1], s.Turns[2]
	// Each turn's updates were all counted when its prompt response arrived
	// (SDK-7): the counts are exact, not "at least".
	assert.Equal(t, turnSummary{
		Name:         "plain",
		StopReason:   "end_turn",
		Updates:      map[string]int{"agent_message_chunk": 3, "tool_call": 1, "tool_call_update": 1},
		Text:         "turn 1: " + promptPlain + " [done]",
		ToolStatuses: []string{"pending", "completed"},
	}, plain)
	assert.Equal(t, turnSummary{
		Name:         "permission",
		StopReason:   "end_turn",
		Updates:      map[string]int{"agent_message_chunk": 4, "tool_call": 1, "tool_call_update": 1},
		Text:         "turn 2: " + promptPermission + " [done]permission: reject-once",
		ToolStatuses: []string{"pending", "failed"},
	}, perm)
	assert.Equal(t, turnSummary{
		Name:         "slow",
		StopReason:   "cancelled",
		Updates:      map[string]int{"agent_message_chunk": 1},
		Text:         "working slowly; waiting for session/cancel",
		ToolStatuses: []string{},
	}, slow)
	assert.Equal(t, map[string]int{"agent_message_chunk": 8, "tool_call": 2, "tool_call_update": 2}, s.Updates)
	assert.Equal(t, []string{"end_turn", "end_turn", "cancelled"}, s.StopReasons)

	assert.Equal(t, 1, s.Permission.Requests)
	require.Len(t, s.Permission.Options, 2)
	assert.Equal(t, "allow_once", s.Permission.Options[0].Kind)
	assert.Equal(t, "allow-once", s.Permission.Options[0].OptionID)
	assert.Equal(t, "reject_once", s.Permission.Options[1].Kind)
	assert.Equal(t, "reject-once", s.Permission.Options[1].OptionID)
	require.NotNil(t, s.Permission.Selected)
	assert.Equal(t, "reject-once", *s.Permission.Selected)

	require.NotNil(t, s.Replay, "the agent advertised loadSession but the client did not reload")
	if !replayMayRace || s.Replay.Chunks != 0 {
		assert.Equal(t, map[string]int{"user_message_chunk": 3, "agent_message_chunk": 8}, s.Replay.Updates)
		assert.Equal(t, 11, s.Replay.Chunks)
		assert.Equal(t, wantTranscript(promptPlain, promptPermission, promptSlow), s.Replay.Transcript)
	} else {
		t.Log("the replay came after session/load's answer (the TypeScript server's race, see TestTSClientTSServer)")
	}

	assert.Empty(t, s.OutOfTurn, "updates outside the flow's steps")
	assert.Equal(t, exits, s.AgentExits)
}

// wantTranscript is the conversation an agent following README.md replays
// on session/load after the plain, permission (rejected) and slow turns.
func wantTranscript(plain, permission, slow string) []transcriptEntry {
	return []transcriptEntry{
		{"user", plain},
		{"agent", "turn 1: "},
		{"agent", plain},
		{"agent", " [done]"},
		{"user", permission},
		{"agent", "turn 2: "},
		{"agent", permission},
		{"agent", " [done]"},
		{"agent", "permission: reject-once"},
		{"user", slow},
		{"agent", "working slowly; waiting for session/cancel"},
	}
}

// TestTSClientTSAgent runs the TypeScript pair against each other: the
// baseline that shows the peers themselves follow the flow.
func TestTSClientTSAgent(t *testing.T) {
	s, err, stderr := runTSClient(t, "node", "agent.mjs")
	require.NoError(t, err, "client.mjs failed; stderr:\n%s", stderr)
	requireFlow(t, s, "acpkit-tsinterop-agent")
}

// TestTSClientReportsDeadAgent shows the harness can fail: an agent that
// exits at once yields a non-zero exit and an error in the summary.
func TestTSClientReportsDeadAgent(t *testing.T) {
	s, err, stderr := runTSClient(t, "node", "-e", "process.exit(0)")
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "client.mjs must fail when the agent is gone")
	assert.Equal(t, 1, exitErr.ExitCode())
	assert.False(t, s.OK)
	assert.NotEmpty(t, s.Errors)
	assert.Contains(t, stderr, "initialize")
}
