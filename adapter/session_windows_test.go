//go:build windows

package adapter

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"acpkit.dev/adapter/internal/fakeagent"
	"acpkit.dev/adapter/internal/wintest"
)

// TestSP5_WholeSessionOnWindows drives a real Adapter through the Windows
// launcher under Wine (make test-windows runs this package's OnWindows
// tests; the rest of the package needs Unix): the start goes through the
// suspended start and the job, a turn runs over the overlapped pipes, and
// StopSession's fixed order ends the runtime, warning about nothing.
func TestSP5_WholeSessionOnWindows(t *testing.T) {
	l, logs := newCapture()
	a, err := New(nil, WithLogger(l), withDrain(time.Second))
	require.NoError(t, err)
	ctx := t.Context()
	s, err := a.StartSession(ctx, StartParams{
		WorkspacePath: wintest.TempDir(t),
		Agent:         AgentConfig{Kind: KindName, Command: fakeagent.Command("hello"), StopGraceMS: 2000},
	})
	require.NoError(t, err)
	assert.Equal(t, "hello-1", s.ID)
	pid, err := strconv.Atoi(s.AgentPID)
	require.NoError(t, err)
	runtime, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	require.NoError(t, err)
	defer windows.CloseHandle(runtime)

	res, err := a.RunTurn(ctx, s, TurnParams{Prompt: "Say hello"})
	require.NoError(t, err)
	assert.Equal(t, EventTurnCompleted, res.Outcome)

	require.NoError(t, a.StopSession(context.Background(), s))
	ev, err := windows.WaitForSingleObject(runtime, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "the runtime has ended")
	for _, r := range logs.all() {
		assert.Less(t, r.Level, slog.LevelWarn, "%s %v", r.Message, r.Attrs)
	}
}
