package acpsdk

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

func agentCommand(t *testing.T) *exec.Cmd {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), agentEnv+"=1")
	return cmd
}

// TestStartAgentSubprocess runs a real agent process over its stdio, makes
// typed calls, then ends the session and reaps the child.
func TestStartAgentSubprocess(t *testing.T) {
	cmd := agentCommand(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	side, err := StartAgent(cmd, &minimalClient{}, &SideOptions{Strict: true})
	require.NoError(t, err)
	ctx := t.Context()
	init, err := side.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	require.NoError(t, err)
	require.Equal(t, "subprocess", init.AgentInfo.Name)
	sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)
	res, err := side.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sess.SessionID, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, gen.StopReasonEndTurn, res.StopReason)
	// Closing our side closes the child's stdin; it exits and is reaped.
	require.NoError(t, side.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
}

func TestStartCommandRejectsPresetStdio(t *testing.T) {
	cmd := agentCommand(t)
	cmd.Stdout = os.Stdout
	_, err := StartCommand(cmd, nil, nil)
	require.ErrorContains(t, err, "cmd.Stdin and cmd.Stdout unset")
	require.Nil(t, cmd.Process, "nothing was started")

	_, err = StartAgent(exec.Command("/nonexistent/agent"), &minimalClient{}, nil)
	require.Error(t, err)
}

// runDescendantHelper is the child side of the descendant tests: "spawn"
// starts a copy of this binary in "hold" mode, which inherits stdout and
// never exits on its own, prints its pid on stderr and exits; "hold" is
// that copy.
func runDescendantHelper(mode string) int {
	if mode == "hold" {
		time.Sleep(time.Hour) // the helper's behaviour, not a wait in a test
		return 0
	}
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), agentEnv+"=hold")
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, cmd.Process.Pid)
	return 0
}
