package acpsdk

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
)

// StartCommand starts cmd and returns a Conn over its stdin and stdout;
// cmd.Stderr is left as the caller set it (the protocol never uses it).
// cmd.Stdin and cmd.Stdout must be nil.
//
// To end the session, Close the Conn (which closes both pipes) or wait for
// Done (the child closed its stdout), then call cmd.Wait to reap the child.
// Calling cmd.Wait first may lose output the Conn has not read yet, because
// Wait closes the stdout pipe.
//
// On Windows the child starts suspended, joins a Job Object with
// kill-on-job-close and is then resumed, so every process it spawns is in
// the job; the job is closed when the child exits, which ends the
// descendants it left running. Elsewhere descendants are the caller's
// business (put the child in its own process group through
// cmd.SysProcAttr to signal them together).
func StartCommand(cmd *exec.Cmd, h Handler, opts *Options) (*Conn, error) {
	r, w, err := startPipes(cmd)
	if err != nil {
		return nil, err
	}
	return NewConn(r, w, h, opts), nil
}

// startPipes starts cmd with pipes on its stdin and stdout and returns the
// parent's ends: its stdout to read and its stdin to write.
func startPipes(cmd *exec.Cmd) (io.ReadCloser, io.WriteCloser, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, nil, errors.New("acpsdk: starting a command needs cmd.Stdin and cmd.Stdout unset")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("acpsdk: stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = stdin.Close()
		return nil, nil, fmt.Errorf("acpsdk: stdout pipe: %w", err)
	}
	prepareStart(cmd)
	if err := cmd.Start(); err != nil {
		// Start closes the pipes it made when it fails.
		return nil, nil, fmt.Errorf("acpsdk: starting %s: %w", cmd.Path, err)
	}
	if err := finishStart(cmd); err != nil {
		// The child was reaped, which closed the pipes.
		return nil, nil, err
	}
	return stdout, stdin, nil
}
