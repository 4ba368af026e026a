package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"acpkit.dev/adapter/internal/contain"
)

// MsgDDMissing is what the remote side prints, and exits 127 with, when it
// must receive environment variables and has no dd (SSH-3).
const MsgDDMissing = "sortie: dd is required on the remote host to receive environment variables"

// ReasonRemote is why a launch over SSH has no containment beyond the
// relay's process group (TD-14, TD-15): the runtime and what it spawns run
// on the far host, and the local ssh may leave a connection master behind
// (ControlPersist) that later sessions to that host share.
const ReasonRemote = "the runtime runs on the remote host, out of reach; the local ssh relay is signalled as a process group"

// The accepted values of worker.ssh_strict_host_key_checking (SSH-1).
const (
	HostKeyAcceptNew = "accept-new"
	HostKeyYes       = "yes"
	HostKeyNo        = "no"
)

// ErrSSHParam is the kind of an SSH start parameter the launcher cannot
// use: a strict-host-key value other than accept-new, yes or no, or an
// ssh_pass_env entry that is not a variable name a POSIX shell can assign.
var ErrSSHParam = errors.New("invalid ssh start parameter")

// Remote is the §21 part of a Spec. A Spec with a Remote is launched only
// by the SSH launcher: Program is then the local ssh client and Dir the
// workspace, which the remote command changes into on the far host.
type Remote struct {
	// Host is the ssh destination, passed after "--".
	Host string
	// StrictHostKeyChecking is accept-new (also when empty), yes or no.
	StrictHostKeyChecking string
	// PassEnv names the local variables carried to the remote runtime
	// (SSH-3, Q-14); those unset or blank here are left out.
	PassEnv []string
	// Command is agent.command, run by the remote shell unsplit (LT-4).
	Command string
}

// SSHSpec is the launch of a remote target t over SSH: the ssh client as
// the relay, no environment of Sortie's own (SSH-3), and the SSH
// parameters the start was given.
func (t Target) SSHSpec(strictHostKeyChecking string, passEnv []string, grace time.Duration) Spec {
	return Spec{
		Program: t.Program,
		Dir:     t.Workspace,
		Grace:   grace,
		Remote: &Remote{
			Host:                  t.Host,
			StrictHostKeyChecking: strictHostKeyChecking,
			PassEnv:               passEnv,
			Command:               t.Command,
		},
	}
}

// CheckSSHParams validates the SSH start parameters before anything is
// parsed or started; failures wrap ErrSSHParam.
func CheckSSHParams(strictHostKeyChecking string, passEnv []string) error {
	if _, err := HostKeyPolicy(strictHostKeyChecking); err != nil {
		return err
	}
	for _, name := range passEnv {
		if !shellName.MatchString(name) {
			return fmt.Errorf("%w: ssh_pass_env entry %q is not an environment variable name (letters, digits and _, not starting with a digit)", ErrSSHParam, name)
		}
	}
	return nil
}

// HostKeyPolicy resolves the StrictHostKeyChecking value of SSH-1: empty
// means accept-new; accept-new, yes and no are used as given; anything else
// is an error wrapping ErrSSHParam. The match is exact, as ssh's own.
func HostKeyPolicy(v string) (string, error) {
	switch v {
	case "":
		return HostKeyAcceptNew, nil
	case HostKeyAcceptNew, HostKeyYes, HostKeyNo:
		return v, nil
	}
	return "", fmt.Errorf("%w: ssh_strict_host_key_checking %q: want %s, %s or %s", ErrSSHParam, v, HostKeyAcceptNew, HostKeyYes, HostKeyNo)
}

// shellName is a name a POSIX shell can assign and export.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvVar is one variable carried to the remote side.
type EnvVar struct {
	Name, Value string
}

// PassedEnv picks the variables of names that lookup finds set to a
// non-blank value, in the order named, each name once (SSH-3).
func PassedEnv(names []string, lookup func(string) (string, bool)) []EnvVar {
	var out []EnvVar
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			out = append(out, EnvVar{Name: name, Value: v})
		}
	}
	return out
}

// SSHArgs is ssh's argument list of SSH-1 for host and one remote command:
// the fixed options, "--" so a host starting with "-" is no option, the
// host, and the command as one argument.
func SSHArgs(hostKeyPolicy, host, remoteCommand string) []string {
	return []string{
		"-o", "StrictHostKeyChecking=" + hostKeyPolicy,
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout=30",
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"--", host, remoteCommand,
	}
}

// RemoteCommand is the shell text the remote side runs: SSH-1's
// `cd -- '<workspace>' && <command>`, preceded, when vars is not empty, by
// the reader of the stdin preamble (SSH-3). The preamble reader checks for
// dd, then reads each value with `dd bs=1 count=<its length in bytes>` —
// one byte per read, so it never takes a byte of what follows — into a
// command substitution that a trailing "." keeps from losing trailing
// newlines, and exports it. Only names and lengths are in this text; the
// values travel on stdin, never on an argument list.
func RemoteCommand(workspace, command string, vars []EnvVar) string {
	var b strings.Builder
	if len(vars) > 0 {
		b.WriteString("if ! command -v dd >/dev/null 2>&1; then echo " + ShellQuote(MsgDDMissing) + " >&2; exit 127; fi; ")
		for _, v := range vars {
			n := v.Name
			b.WriteString(n + "=$(dd bs=1 count=" + strconv.Itoa(len(v.Value)) + " 2>/dev/null; echo .) && " +
				n + "=${" + n + "%.} && export " + n + " && ")
		}
	}
	b.WriteString("cd -- " + ShellQuote(workspace) + " && " + command)
	return b.String()
}

// Preamble is what precedes the protocol on the remote runtime's stdin:
// every carried value, byte for byte, in RemoteCommand's order.
func Preamble(vars []EnvVar) []byte {
	var b []byte
	for _, v := range vars {
		b = append(b, v.Value...)
	}
	return b
}

// ShellQuote renders s as one single-quoted POSIX shell word: inside
// single quotes nothing is special, so each quote inside s becomes a close
// quote, a backslash-escaped quote and an open quote.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SSH launches a remote Spec: it composes ssh's arguments (SSH-1) and the
// stdin preamble (SSH-3) and starts the local ssh client through Relay, so
// the relay gets the local launcher's process group, pipes and reap, and
// the signals of teardown reach the relay, not the far runtime (TD-14). One
// ssh process carries the whole session (SSH-2).
type SSH struct {
	// Relay starts the ssh client: the platform's local launcher.
	Relay Launcher
	// Lookup reads the local environment; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
}

var _ Launcher = SSH{}

// Launch starts ssh for spec.Remote. The relay inherits this process's
// environment (ssh needs it, SP-1), but nothing is appended and nothing of
// it reaches the remote side beyond what OpenSSH itself forwards and the
// carried variables (SSH-3). Failures are those of the relay, or an error
// wrapping ErrSSHParam, before anything starts.
func (l SSH) Launch(ctx context.Context, spec Spec) (*Process, error) {
	r := spec.Remote
	if r == nil {
		return nil, fmt.Errorf("%w: the spec names no remote host", ErrSSHParam)
	}
	if err := CheckSSHParams(r.StrictHostKeyChecking, r.PassEnv); err != nil {
		return nil, err
	}
	policy, _ := HostKeyPolicy(r.StrictHostKeyChecking)
	lookup := l.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	vars := PassedEnv(r.PassEnv, lookup)
	if l.Relay == nil {
		return nil, fmt.Errorf("%w: no relay launcher", ErrSSHParam)
	}
	p, err := l.Relay.Launch(ctx, Spec{
		Program: spec.Program,
		Args:    SSHArgs(policy, r.Host, RemoteCommand(spec.Dir, r.Command, vars)),
		Dir:     spec.Dir,
		Grace:   spec.Grace,
		Log:     spec.Log,
		Contain: contain.Config{Mode: contain.Off, Reason: ReasonRemote},
	})
	if err != nil {
		return nil, err
	}
	if len(vars) > 0 {
		p.stdin = &preambleWriter{WriteCloser: p.stdin, preamble: Preamble(vars)}
	}
	return p, nil
}

// preambleWriter writes the preamble before the first write through it, so
// the values go ahead of the protocol on the same stream without Launch
// blocking on a relay that is still connecting. Close does not wait for a
// write in progress (TD-4).
type preambleWriter struct {
	io.WriteCloser
	once     sync.Once
	preamble []byte
	err      error
}

func (w *preambleWriter) Write(b []byte) (int, error) {
	w.once.Do(func() {
		_, w.err = w.WriteCloser.Write(w.preamble)
		clear(w.preamble) // the values need not stay in memory
		w.preamble = nil
	})
	if w.err != nil {
		return 0, w.err
	}
	return w.WriteCloser.Write(b)
}
