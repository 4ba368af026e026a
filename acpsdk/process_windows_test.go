//go:build windows

package acpsdk

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// TestStartCommandDescendantsDieWithTheChild runs under Wine: the child
// leaves a descendant holding its stdout and exits; the job StartCommand
// put it in is closed, the descendant ends, and the Conn sees end of
// stream instead of waiting on it forever.
func TestStartCommandDescendantsDieWithTheChild(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), agentEnv+"=spawn")
	stderrR, stderrW, err := os.Pipe()
	require.NoError(t, err)
	defer stderrR.Close()
	cmd.Stderr = stderrW
	conn, err := StartCommand(cmd, nil, nil)
	require.NoError(t, err)
	require.NoError(t, stderrW.Close())
	defer conn.Close()

	line, err := bufio.NewReader(stderrR).ReadString('\n')
	require.NoError(t, err)
	gpid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(gpid))
	require.NoError(t, err, "the descendant was running")
	defer windows.CloseHandle(h)

	select {
	case <-conn.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the descendant still holds stdout")
	}
	ev, err := windows.WaitForSingleObject(h, 20_000)
	require.NoError(t, err)
	assert.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "the descendant ended with the child")
	require.NoError(t, cmd.Wait())
}
