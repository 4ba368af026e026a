// Package refclient is the reference ACP client: a small client on
// acpsdk's client side that behaves well by default and misbehaves on
// demand, one flag per defect, so each client check of acpcheck is shown
// to fail (conformance/check's client_grader_test.go).
//
//	refclient [flags] [--] AGENT [ARGS...]
//
// It starts AGENT, runs initialize (protocol version 1, clientInfo, fs
// only with --fs, no terminal), session/new in its own directory (or
// continues --resume ID by session/resume or session/load, whichever the
// agent advertises), one prompt (--prompt), and prints the agent's text
// and the stop reason on stdout. A permission request gets the first
// refusing option (else cancelled); after the client cancelled the turn,
// cancelled. The first interrupt (SIGINT; on Windows CTRL_BREAK_EVENT)
// cancels the turn with session/cancel and keeps waiting for the prompt's
// answer; a second exits. At the end it closes the agent's stdin and
// waits for it to exit (killing it after 5 s). Exit status: 0 after the
// turn ended, 1 on a protocol failure, 2 on bad usage, 3 when the agent
// answered another protocol version.
//
// Behaviour flags:
//
//	--prompt TEXT       the prompt (default "hello")
//	--fs                advertise and serve fs.readTextFile and fs.writeTextFile
//	--hold-permissions  leave permission requests pending until the turn is cancelled or ends
//	--resume ID         continue session ID when the agent advertises a way
//	--max-line BYTES    the bound on a line from the agent (default acpsdk's, 10 MiB)
//
// Defect flags (each breaks the check named):
//
//	--no-wait-prompt            session.turn: close the connection right after sending the prompt
//	--skip-initialize           handshake.initialize: start with session/new
//	--protocol-version N        handshake.initialize: ask for version N
//	--no-client-info            handshake.client-info: no clientInfo
//	--ignore-version            handshake.version-mismatch: carry on whatever version is answered
//	--strict-capabilities       handshake.unknown-capabilities: disconnect on unknown members
//	--relative-cwd              session.cwd-absolute: send cwd "."
//	--serve-unadvertised        client.unadvertised-methods: answer fs methods it did not advertise
//	--fs-read-wrong             fs.read: answer other content
//	--fs-write-ignore           fs.write: answer success and write nothing
//	--fs-relative               fs.relative-path: read relative paths from its own directory
//	--ignore-permissions        permission.answered: never answer a permission request
//	--permission-after-cancel-selected  permission.cancelled: after cancelling, still select an option
//	--cancel-request-only       cancel.session-cancel: cancel with $/cancel_request alone
//	--exit-on-cancel            cancel.session-cancel: exit right after sending session/cancel
//	--unknown-request-code N    rpc.unknown-request: answer unknown requests with code N
//	--answer-notifications      rpc.unknown-notification: answer unknown notifications
//	--fail-unknown-update       update.unknown-variant: abort on an update of an unknown kind
//	--fail-malformed-update     update.malformed: abort on an update that does not decode
//	--fail-usage-update         update.usage: abort on usage_update
//	--fail-foreign-update       update.foreign-session: abort on an update for another session
//	--fail-early-update         update.before-session: abort on an update before session/new's answer
//	--fail-late-update          update.after-response: abort on an update after the prompt's answer
//	--die-on-garbage            wire.non-json: abort on a line that is not JSON
//	--die-on-oversize           wire.oversize-line: abort on a line over its bound
//	--kill-agent                shutdown.stdin: end the agent with SIGKILL, stdin left open
//	--no-wait-agent             shutdown.waits: close the agent's stdin and exit at once
//	--force-load                session.continuation-unadvertised: session/load --resume's ID even unadvertised
//	--load-and-resume           session.continuation-once: continue --resume's ID by both routes
package refclient

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrUsage is the kind of every command-line error.
var ErrUsage = errors.New("refclient: bad usage")

// Options select the client's behaviour; the zero value with
// DefaultOptions' values is a well-behaved client.
type Options struct {
	Prompt          string
	FS              bool
	HoldPermissions bool
	Resume          string
	MaxLine         int

	NoWaitPrompt, SkipInitialize, NoClientInfo, IgnoreVersion bool
	ProtocolVersion                                           int
	StrictCapabilities, RelativeCwd, ServeUnadvertised        bool
	FSReadWrong, FSWriteIgnore, FSRelative                    bool
	IgnorePermissions, PermissionAfterCancelSelected          bool
	CancelRequestOnly, ExitOnCancel                           bool
	UnknownRequestCode                                        int
	AnswerNotifications                                       bool
	FailUnknownUpdate, FailMalformedUpdate, FailUsageUpdate   bool
	FailForeignUpdate, FailEarlyUpdate, FailLateUpdate        bool
	DieOnGarbage, DieOnOversize                               bool
	KillAgent, NoWaitAgent                                    bool
	ForceLoad, LoadAndResume                                  bool

	// Agent is the agent's command line.
	Agent []string
}

// ParseFlags reads the command line.
func ParseFlags(args []string, stderr io.Writer) (Options, error) {
	o := Options{Prompt: "hello", ProtocolVersion: 1}
	fs := flag.NewFlagSet("refclient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Prompt, "prompt", o.Prompt, "the prompt")
	fs.BoolVar(&o.FS, "fs", false, "advertise and serve fs.readTextFile and fs.writeTextFile")
	fs.BoolVar(&o.HoldPermissions, "hold-permissions", false, "leave permission requests pending until the turn is cancelled or ends")
	fs.StringVar(&o.Resume, "resume", "", "continue session `ID` when the agent advertises a way")
	for _, b := range []struct {
		p    *bool
		name string
	}{
		{&o.NoWaitPrompt, "no-wait-prompt"}, {&o.SkipInitialize, "skip-initialize"}, {&o.NoClientInfo, "no-client-info"},
		{&o.IgnoreVersion, "ignore-version"}, {&o.StrictCapabilities, "strict-capabilities"}, {&o.RelativeCwd, "relative-cwd"},
		{&o.ServeUnadvertised, "serve-unadvertised"}, {&o.FSReadWrong, "fs-read-wrong"}, {&o.FSWriteIgnore, "fs-write-ignore"},
		{&o.FSRelative, "fs-relative"}, {&o.IgnorePermissions, "ignore-permissions"},
		{&o.PermissionAfterCancelSelected, "permission-after-cancel-selected"}, {&o.CancelRequestOnly, "cancel-request-only"},
		{&o.ExitOnCancel, "exit-on-cancel"}, {&o.AnswerNotifications, "answer-notifications"},
		{&o.FailUnknownUpdate, "fail-unknown-update"}, {&o.FailMalformedUpdate, "fail-malformed-update"},
		{&o.FailUsageUpdate, "fail-usage-update"}, {&o.FailForeignUpdate, "fail-foreign-update"},
		{&o.FailEarlyUpdate, "fail-early-update"}, {&o.FailLateUpdate, "fail-late-update"},
		{&o.DieOnGarbage, "die-on-garbage"}, {&o.DieOnOversize, "die-on-oversize"},
		{&o.KillAgent, "kill-agent"}, {&o.NoWaitAgent, "no-wait-agent"},
		{&o.ForceLoad, "force-load"}, {&o.LoadAndResume, "load-and-resume"},
	} {
		fs.BoolVar(b.p, b.name, false, "a defect: see the package doc")
	}
	fs.IntVar(&o.MaxLine, "max-line", 0, "the bound on a line from the agent, in `BYTES` (default: acpsdk's)")
	fs.IntVar(&o.ProtocolVersion, "protocol-version", o.ProtocolVersion, "the protocol version initialize asks for")
	fs.IntVar(&o.UnknownRequestCode, "unknown-request-code", 0, "answer unknown requests with this error `code` (default: -32601)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	o.Agent = fs.Args()
	if len(o.Agent) == 0 {
		fmt.Fprintln(stderr, "usage: refclient [flags] [--] AGENT [ARGS...]")
		return o, ErrUsage
	}
	return o, nil
}
