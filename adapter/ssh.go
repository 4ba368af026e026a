package adapter

import (
	"acpkit.dev/adapter/internal/launch"
	"acpkit.dev/adapter/internal/stderrlog"
)

// ErrSSHParam is wrapped by StartSession's error when an SSH start
// parameter cannot be used: StartParams.SSHStrictHostKeyChecking other than
// accept-new (or empty), yes or no, or an SSHPassEnv entry that is no
// variable name. Nothing is started. The error carries no Kind, so it is
// never retried: the same parameters fail the same way (§23's rule for an
// unclassified failure).
var ErrSSHParam = launch.ErrSSHParam

// msgSSHConnectionFailed is SS-4's message, byte for byte.
const msgSSHConnectionFailed = "ssh connection failed"

// sshConnectionFailedStatus is the exit status of an ssh client that could
// not reach or keep its connection (SSH-4, SS-4).
const sshConnectionFailedStatus = 255

// earlyExit reports a start whose runtime exited on its own before
// answering (SS-3), or, for a remote launch whose ssh client exited 255,
// the connection failure of SS-4, which takes precedence. A 127 (the
// remote shell found no runtime) or the preamble reader's 1 (no dd) stays
// the early exit report with the remote side's message in the tail. Call it only
// for an exit this adapter did not cause (launch.ExitStatus.Stopped false):
// ssh also exits 255 on the SIGTERM of teardown.
func (s *session) earlyExit(st launch.ExitStatus) error {
	if s.remote && st.Err == nil && st.Signal == "" && st.Code == sshConnectionFailedStatus {
		return newError(KindPortExit, msgSSHConnectionFailed, &stderrlog.TailError{Tail: s.stderr.Tail()})
	}
	return lift(s.stderr.EarlyExit(st.String()))
}
