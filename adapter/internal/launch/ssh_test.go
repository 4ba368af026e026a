package launch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/contain"
	"acpkit.dev/adapter/internal/wintest"
)

func TestSSH1_ArgvExact(t *testing.T) {
	assert.Equal(t, []string{
		"-o", "StrictHostKeyChecking=accept-new",
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout=30",
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"--", "-build-host", "cd -- '/w' && gemini --acp",
	}, SSHArgs(HostKeyAcceptNew, "-build-host", "cd -- '/w' && gemini --acp"))
}

func TestSSH1_RemoteCommandWithoutPassEnv(t *testing.T) {
	assert.Equal(t, `cd -- '/srv/my work/it'\''s $HOME' && gemini --acp --model "x y"`,
		RemoteCommand("/srv/my work/it's $HOME", `gemini --acp --model "x y"`, nil),
		"the workspace is one single-quoted word; the command travels unsplit (LT-4)")
}

func TestSSH1_HostKeyPolicy(t *testing.T) {
	for in, want := range map[string]string{"": HostKeyAcceptNew, "accept-new": "accept-new", "yes": "yes", "no": "no"} {
		got, err := HostKeyPolicy(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"ask", "off", "Yes", " yes", "accept-new ", "true"} {
		_, err := HostKeyPolicy(bad)
		require.ErrorIs(t, err, ErrSSHParam, bad)
		assert.Contains(t, err.Error(), "want accept-new, yes or no")
		assert.ErrorIs(t, CheckSSHParams(bad, nil), ErrSSHParam)
	}
}

func TestSSH3_PassEnvNamesMustBeShellNames(t *testing.T) {
	require.NoError(t, CheckSSHParams("", []string{"API_KEY", "_x1"}))
	for _, bad := range []string{"", "1ABC", "A-B", "A B", "A=B", "A;rm", "Ä"} {
		assert.ErrorIs(t, CheckSSHParams("", []string{bad}), ErrSSHParam, "%q", bad)
	}
}

func TestSSH3_PassedEnvCarriesSetNonBlankValuesOnce(t *testing.T) {
	env := map[string]string{"SET": "v", "BLANK": " \t\n", "EMPTY": "", "NL": "a\n"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	assert.Equal(t, []EnvVar{{"NL", "a\n"}, {"SET", "v"}},
		PassedEnv([]string{"NL", "UNSET", "BLANK", "EMPTY", "SET", "NL"}, lookup))
	assert.Empty(t, PassedEnv(nil, lookup))
}

func TestSSH3_RemoteCommandNamesLengthsNeverValues(t *testing.T) {
	vars := []EnvVar{{"TOKEN", "s3cr3t value"}, {"OTHER", "é\n"}}
	cmd := RemoteCommand("/w", "agent", vars)
	assert.NotContains(t, cmd, "s3cr3t")
	assert.Contains(t, cmd, "TOKEN=$(dd bs=1 count=12 2>/dev/null; echo .)")
	assert.Contains(t, cmd, "OTHER=$(dd bs=1 count=3 2>/dev/null; echo .)", "the count is in bytes")
	assert.Contains(t, cmd, "'"+MsgDDMissing+"' >&2; exit 127")
	assert.Equal(t, "s3cr3t valueé\n", string(Preamble(vars)))
}

// recordingPipe stands for the relay's stdin.
type recordingPipe struct {
	bytes.Buffer
	closed bool
	fail   error
}

func (r *recordingPipe) Write(b []byte) (int, error) {
	if r.fail != nil {
		return 0, r.fail
	}
	return r.Buffer.Write(b)
}
func (r *recordingPipe) Close() error { r.closed = true; return nil }

func TestSSH3_PreambleGoesAheadOfTheFirstWrite(t *testing.T) {
	pipe := &recordingPipe{}
	w := &preambleWriter{WriteCloser: pipe, preamble: []byte("v1v2")}
	assert.Empty(t, pipe.String(), "nothing is written before the protocol writes")
	n, err := w.Write([]byte(`{"id":1}` + "\n"))
	require.NoError(t, err)
	assert.Equal(t, 9, n, "the count is the caller's bytes")
	_, err = io.WriteString(w, "x\n")
	require.NoError(t, err)
	assert.Equal(t, "v1v2{\"id\":1}\nx\n", pipe.String(), "once, first")
	require.NoError(t, w.Close())
	assert.True(t, pipe.closed)

	broken := &recordingPipe{fail: errors.New("broken pipe")}
	w = &preambleWriter{WriteCloser: broken, preamble: []byte("v")}
	_, err = w.Write([]byte("a"))
	assert.ErrorContains(t, err, "broken pipe", "a relay that is gone fails the write")
	_, err = w.Write([]byte("a"))
	assert.ErrorContains(t, err, "broken pipe", "and every later one")
}

func TestSSH1_SSHLauncherRefusesALocalSpec(t *testing.T) {
	dir := wintest.TempDir(t) // this test also runs under Wine
	_, err := SSH{}.Launch(t.Context(), Spec{Program: "/bin/true", Dir: dir})
	assert.ErrorIs(t, err, ErrSSHParam)
	_, err = SSH{}.Launch(t.Context(), Spec{Program: "/bin/true", Dir: dir, Remote: &Remote{Host: "h", StrictHostKeyChecking: "ask"}})
	assert.ErrorIs(t, err, ErrSSHParam, "validated before anything starts")
	_, err = SSH{}.Launch(t.Context(), Spec{Program: "/bin/true", Dir: dir, Remote: &Remote{Host: "h"}})
	assert.ErrorIs(t, err, ErrSSHParam, "no relay to start ssh with")
}

// specRelay records the spec it is asked to launch and refuses it.
type specRelay struct{ got *Spec }

func (r specRelay) Launch(_ context.Context, spec Spec) (*Process, error) {
	*r.got = spec
	return nil, errors.New("not starting")
}

// The relay is signalled as a process group, never contained: the runtime
// runs out of reach on the far host (TD-14), and the local ssh may leave a
// connection master other sessions share. The record says so.
func TestTD14_TD15_RelayIsNotContained(t *testing.T) {
	var got Spec
	log := slog.New(slog.DiscardHandler)
	_, err := SSH{Relay: specRelay{&got}}.Launch(t.Context(), Spec{
		Program: "/usr/bin/ssh", Dir: "/w", Log: log,
		Contain: contain.Config{Mode: contain.Tracked},
		Remote:  &Remote{Host: "h", Command: "agent"},
	})
	require.Error(t, err)
	assert.Equal(t, contain.Config{Mode: contain.Off, Reason: ReasonRemote}, got.Contain)
	assert.Same(t, log, got.Log)
}
