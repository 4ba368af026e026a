package adapter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/stderrlog"
)

// wireRuntime installs an sh script as the runtime "sp8-agent" on PATH. It
// answers initialize only when answer is true, copies the requests it read
// to stderr, one per line, and exits 3, so the early exit report (SS-3)
// carries exactly what the adapter wrote on the wire.
func wireRuntime(t *testing.T, answer bool) {
	t.Helper()
	script := "#!/bin/sh\nIFS= read -r l1 || exit 9\nprintf '%s\\n' \"$l1\" >&2\n"
	if answer {
		script += `printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}'` + "\n" +
			"IFS= read -r l2 || exit 9\nprintf '%s\\n' \"$l2\" >&2\n"
	}
	script += "exit 3\n"
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "sp8-agent"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// wireLines starts a session against the installed runtime and returns the
// request lines it reported back, decoded.
func wireLines(t *testing.T) []map[string]any {
	t.Helper()
	a, err := New(nil)
	require.NoError(t, err)
	sess, err := a.StartSession(t.Context(), StartParams{
		WorkspacePath: t.TempDir(),
		Agent:         AgentConfig{Kind: KindName, Command: "sp8-agent", ReadTimeoutMS: 10000},
	})
	require.NoError(t, a.StopSession(t.Context(), sess))
	require.Error(t, err)
	require.Equal(t, KindPortExit, KindOf(err), "%v", err)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "the agent runtime exited before responding: exit status 3", e.Message)
	var tail *stderrlog.TailError
	require.ErrorAs(t, err, &tail)
	var out []map[string]any
	for _, line := range strings.Split(tail.Tail, stderrlog.Separator) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "a request is one JSON line: %q", line)
		out = append(out, m)
	}
	return out
}

func TestSP8_RequestsAreJSONRPC2LinesWithIDsFromOne(t *testing.T) {
	t.Run("initialize is id 1", func(t *testing.T) {
		wireRuntime(t, false)
		lines := wireLines(t)
		require.Len(t, lines, 1)
		assert.Equal(t, "2.0", lines[0]["jsonrpc"])
		assert.Equal(t, float64(1), lines[0]["id"], "ids are integers starting at 1")
		assert.Equal(t, "initialize", lines[0]["method"])
	})
	t.Run("the next request is id 2", func(t *testing.T) {
		wireRuntime(t, true)
		lines := wireLines(t)
		require.Len(t, lines, 2)
		for i, l := range lines {
			assert.Equal(t, "2.0", l["jsonrpc"])
			assert.Equal(t, float64(i+1), l["id"])
		}
		assert.Equal(t, "initialize", lines[0]["method"])
		assert.Equal(t, "session/new", lines[1]["method"])
	})
}
