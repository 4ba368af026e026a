package acpnettest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listening is what a served agent prints first: "listening on URL".
const listening = "listening on "

// firstURL reads the first line of r, which must be "listening on URL",
// then drains the rest in the background.
func firstURL(t testing.TB, r io.Reader) string {
	t.Helper()
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), listening)
	require.True(t, ok, "the first line is %q, not %q URL", line, listening)
	go func() { _, _ = io.Copy(io.Discard, br) }()
	return url
}

// Serve runs serve until the test ends and returns the URL of the first
// line it writes: serve serves an agent until ctx ends, and writes
// "listening on URL" to w first (as refagent.Listen does). It must return
// nil once ctx ends.
func Serve(t testing.TB, serve func(ctx context.Context, w io.Writer) error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, w)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
	})
	return firstURL(t, out)
}

// Run starts cmd, whose first stdout line is "listening on URL" (as
// `refagent --listen` prints), and returns the URL; at the end of the test
// the command is interrupted and waited for.
func Run(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	return firstURL(t, stdout)
}
