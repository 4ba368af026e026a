package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// The LT-1/LT-2 and CFG-2/LT-3/LT-4 messages, byte for byte.
const (
	MsgEmptyWorkspace      = "empty workspace path"
	MsgUnresolvedWorkspace = "cannot resolve workspace path"
	MsgMissingWorkspace    = "workspace path does not exist"
	MsgNotDirWorkspace     = "workspace path is not a directory"
	// MsgSymlinkWorkspace is this implementation's text for LT-2;
	// the spec fixes only the kind.
	MsgSymlinkWorkspace = "workspace path is a symbolic link"
	MsgEmptyCommand     = "agent command is empty or whitespace-only"
	MsgSSHNotFound      = "ssh binary not found on orchestrator host"
)

// Target is what a session start launches (spec §3).
type Target struct {
	// Workspace is the absolute, verified workspace path (LT-1, LT-2).
	Workspace string
	// Program is the absolute path of the local executable: the runtime
	// on a local launch (LT-3), the ssh client on a remote one (LT-4).
	Program string
	// Args are the command's remaining tokens on a local launch; nil on a
	// remote one, whose ssh arguments the SSH launcher composes (§21).
	Args []string
	// Remote is true when the runtime runs over SSH on Host.
	Remote bool
	// Host is the SSH host of a remote launch.
	Host string
	// Command is agent.command as configured; on a remote launch it
	// travels to the far side unsplit (LT-4).
	Command string
	// Dialed is true when the runtime is served over the network and a
	// connection replaces the launch ([acpkit], see Dialed).
	Dialed bool
}

// Spec is the local launch of t: its program and arguments in its
// workspace, with env appended after the inherited environment (SP-1).
func (t Target) Spec(env []string, grace time.Duration) Spec {
	return Spec{Program: t.Program, Args: t.Args, Dir: t.Workspace, Env: env, Grace: grace}
}

// Resolve validates the workspace (LT-1, LT-2) and then resolves the
// command: the runtime program on PATH for a local launch (CFG-2, LT-3), or
// the local ssh client when sshHost is non-blank (LT-4). Failures are
// *fault.Error values of kind invalid_workspace_cwd or agent_not_found.
func Resolve(workspace, command, sshHost string) (Target, error) {
	dir, err := CheckWorkspace(workspace)
	if err != nil {
		return Target{}, err
	}
	t := Target{Workspace: dir, Command: command}
	if host := strings.TrimSpace(sshHost); host != "" {
		ssh, err := lookProgram("ssh")
		if err != nil {
			return Target{}, fault.New(contract.KindAgentNotFound, MsgSSHNotFound, err)
		}
		t.Program, t.Remote, t.Host = ssh, true, host
		return t, nil
	}
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return Target{}, fault.New(contract.KindAgentNotFound, MsgEmptyCommand, nil)
	}
	prog, err := lookProgram(fields[0])
	if err != nil {
		return Target{}, fault.New(contract.KindAgentNotFound, fmt.Sprintf("agent command %q not found", fields[0]), err)
	}
	t.Program, t.Args = prog, fields[1:]
	return t, nil
}

// lookProgram finds name on PATH (or as a path, when it has a separator)
// and returns it absolute. A relative result would otherwise be resolved
// against the child's working directory, not where it was found. Go's
// refusal to run a program found through a relative PATH entry (ErrDot)
// counts as not found.
func lookProgram(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// CheckWorkspace validates a workspace path in the LT-1 order (non-empty,
// absolute form, exists, directory) and refuses a symbolic link (LT-2). It
// returns the absolute path. Failures are *fault.Error values of kind
// invalid_workspace_cwd. It runs at resolution and again immediately before
// a local launch (LT-5).
func CheckWorkspace(path string) (string, error) {
	if path == "" {
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgEmptyWorkspace, nil)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgUnresolvedWorkspace, err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgMissingWorkspace, err)
	case err != nil:
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgUnresolvedWorkspace, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgSymlinkWorkspace, nil)
	case !fi.IsDir():
		return "", fault.New(contract.KindInvalidWorkspaceCwd, MsgNotDirWorkspace, nil)
	}
	return abs, nil
}
