//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2E_StdinJoinsThePromptBeforeIt: `git diff | acprun "Review this
// diff:" -` is one turn, the instruction and then the diff (it was two).
func TestE2E_StdinJoinsThePromptBeforeIt(t *testing.T) {
	const diff = "diff --git a/x b/x\n+added\n"
	r := invocation{args: []string{"--json", "Review this diff:", "-"}, stdin: diff}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	res := last(t, r.stdout)
	assert.EqualValues(t, 1, res["turns"], "one turn")
	assert.Contains(t, messages(t, r.stdout), "You said: Review this diff:\n\n"+diff)
}

func TestE2E_FinalPrintsOnlyTheLastAgentMessage(t *testing.T) {
	r := invocation{args: []string{"--final", "first", "second"}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	assert.Equal(t, "You said: second\n", string(r.stdout))
	r = invocation{args: []string{"--final", "stop=refusal"}}.do(t)
	assert.Equal(t, 4, r.status)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "acprun: turn 1 ended turn_failed: turn_refused: turn failed")
}

func TestE2E_UsageErrorsAreShortAndExitTwo(t *testing.T) {
	r := invocation{args: []string{"--jsno", "hello"}}.do(t)
	assert.Equal(t, 2, r.status)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "acprun: unknown flag --jsno (did you mean --json?)\nusage: acprun [flags] [prompt ...] [-]\nRun 'acprun --help' for the flags.\n", r.stderr)

	r = invocation{args: []string{"--turn-timeout", "soon", "hello"}}.do(t)
	assert.Equal(t, 2, r.status)
	assert.Contains(t, r.stderr, `"soon" is not a duration: use a unit, e.g. 5s`)

	mcp := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(mcp, []byte(`{"mcpServers":{"x":{"command":"/bin/true","colour":"red"}}}`), 0o644))
	spawned := filepath.Join(t.TempDir(), "record.jsonl")
	r = invocation{args: []string{"--mcp-config", mcp, "--command", refagent("--record-mcp", spawned), "hello"}}.do(t)
	assert.Equal(t, 2, r.status, "a bad --mcp-config is a usage error")
	assert.Empty(t, r.stdout, "nothing started")
	assert.NoFileExists(t, spawned, "the runtime never ran")
	assert.Contains(t, r.stderr, "acprun: --mcp-config "+mcp+": parse MCP config:")
}

func TestE2E_HelpExitsZeroEverywhere(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"replay", "--help"}, {"show", "--help"}, {"refagent", "--help"}} {
		r := invocation{args: args}.do(t)
		assert.Equal(t, 0, r.status, "%v: %s", args, r.stderr)
		assert.Contains(t, string(r.stdout), "usage:", "%v: the usage is on stdout", args)
	}
	r := invocation{args: []string{"refagent", "--version"}}.do(t)
	assert.Equal(t, 0, r.status, r.stderr)
	assert.Regexp(t, `^refagent \S+`, string(r.stdout))
}

func TestE2E_ReplayChecksThePromptAndShowPrintsATimeline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hello.jsonl")
	r := invocation{args: []string{"--record", file, "hello"}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)

	r = invocation{args: []string{"--json", "--command", filepath.Join(bin, "acprun") + " replay " + file, "goodbye"}}.do(t)
	assert.Equal(t, 4, r.status)
	assert.Contains(t, r.stderr, `the client sent the prompt "goodbye" where the recording has "hello"`)

	r = invocation{args: []string{"show", file}}.do(t)
	require.Equal(t, 0, r.status, r.stderr)
	out := string(r.stdout)
	for _, want := range []string{"process  started, pid ", "client   initialize #1", "client   session/prompt #3: \"hello\"",
		"runtime  session/update agent_message_chunk \"Hello\"", "runtime  answered session/prompt #3 in ", "turns\n  1 "} {
		assert.Contains(t, out, want)
	}
}
