//go:build unix

package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/contract"
)

// writeExecutable puts a tiny executable named name in dir.
func writeExecutable(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	return p
}

func TestLT1_WorkspaceChecksInOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))

	cases := []struct {
		name, path, msg string
	}{
		{"empty", "", MsgEmptyWorkspace},
		{"missing", filepath.Join(dir, "nope"), MsgMissingWorkspace},
		{"missing parent is a file", filepath.Join(file, "sub"), MsgMissingWorkspace},
		{"file", file, MsgNotDirWorkspace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckWorkspace(c.path)
			requireFault(t, err, contract.KindInvalidWorkspaceCwd, c.msg)
			// The same check fronts Resolve, before the command is looked at.
			_, err = Resolve(c.path, "", "")
			requireFault(t, err, contract.KindInvalidWorkspaceCwd, c.msg)
		})
	}

	t.Run("relative path is made absolute", func(t *testing.T) {
		t.Chdir(dir)
		require.NoError(t, os.Mkdir("ws", 0o755))
		got, err := CheckWorkspace("ws")
		require.NoError(t, err)
		assert.True(t, filepath.IsAbs(got))
		assert.Equal(t, "ws", filepath.Base(got))
	})
}

func TestLT2_SymlinkWorkspaceRefused(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))

	for _, p := range []string{link, link + "/", link + "/."} {
		_, err := CheckWorkspace(p)
		requireFault(t, err, contract.KindInvalidWorkspaceCwd, MsgSymlinkWorkspace)
	}
	// A link to a file is refused as a link too, not followed.
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.NoError(t, os.Symlink(file, filepath.Join(dir, "filelink")))
	_, err := CheckWorkspace(filepath.Join(dir, "filelink"))
	requireFault(t, err, contract.KindInvalidWorkspaceCwd, MsgSymlinkWorkspace)
	_, err = Resolve(link, "sh", "")
	requireFault(t, err, contract.KindInvalidWorkspaceCwd, MsgSymlinkWorkspace)

	// No process is started: the local launcher refuses the same path.
	_, err = Local{}.Launch(t.Context(), Spec{Program: "/bin/sh", Dir: link})
	requireFault(t, err, contract.KindInvalidWorkspaceCwd, MsgSymlinkWorkspace)
}

func TestLT3_CommandResolvedOnPath(t *testing.T) {
	ws, bin := t.TempDir(), t.TempDir()
	prog := writeExecutable(t, bin, "fake-agent")
	t.Setenv("PATH", bin)

	tgt, err := Resolve(ws, "  fake-agent   --acp\t-a  ", "")
	require.NoError(t, err)
	assert.Equal(t, prog, tgt.Program)
	assert.Equal(t, []string{"--acp", "-a"}, tgt.Args)
	assert.Equal(t, ws, tgt.Workspace)
	assert.False(t, tgt.Remote)

	_, err = Resolve(ws, "missing-agent --acp", "")
	f := requireFault(t, err, contract.KindAgentNotFound, `agent command "missing-agent" not found`)
	assert.Error(t, f.Err, "the lookup failure is kept as the cause")

	// An explicit path is resolved as given, then made absolute so the
	// child's working directory cannot change what runs.
	t.Chdir(bin)
	tgt, err = Resolve(ws, "./fake-agent", "")
	require.NoError(t, err)
	assert.Equal(t, prog, tgt.Program)
}

func TestCFG2_EmptyCommandIsAgentNotFound(t *testing.T) {
	ws := t.TempDir()
	for _, cmd := range []string{"", "   ", "\t\n"} {
		_, err := Resolve(ws, cmd, "")
		requireFault(t, err, contract.KindAgentNotFound, MsgEmptyCommand)
	}
}

func TestCFG3_CommandCarriesProtocolSwitch(t *testing.T) {
	ws, bin := t.TempDir(), t.TempDir()
	writeExecutable(t, bin, "kiro-cli")
	t.Setenv("PATH", bin)
	tgt, err := Resolve(ws, "kiro-cli acp -a --model x", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"acp", "-a", "--model", "x"}, tgt.Args)
	assert.Equal(t, tgt.Args, tgt.Spec(nil, 0).Args)
}

func TestLT4_SSHModeResolvesLocalSSH(t *testing.T) {
	ws, bin := t.TempDir(), t.TempDir()
	ssh := writeExecutable(t, bin, "ssh")
	t.Setenv("PATH", bin)

	// The runtime program need not exist locally: only ssh is resolved,
	// and the command travels unsplit.
	tgt, err := Resolve(ws, "gemini --acp  --yolo", " build-host ")
	require.NoError(t, err)
	assert.True(t, tgt.Remote)
	assert.Equal(t, ssh, tgt.Program)
	assert.Equal(t, "build-host", tgt.Host)
	assert.Equal(t, "gemini --acp  --yolo", tgt.Command)
	assert.Nil(t, tgt.Args)

	// A blank host is a local launch.
	_, err = Resolve(ws, "gemini --acp", "   ")
	requireFault(t, err, contract.KindAgentNotFound, `agent command "gemini" not found`)
}

func TestLT4_MissingSSHIsAgentNotFound(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	_, err := Resolve(ws, "gemini --acp", "build-host")
	requireFault(t, err, contract.KindAgentNotFound, MsgSSHNotFound)
}
