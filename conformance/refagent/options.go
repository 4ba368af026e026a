package refagent

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"acpkit.dev/internal/cmdline"
)

// ErrUsage is the kind of every command-line error.
var ErrUsage = errors.New("refagent: bad usage")

// Options select the agent's behaviour. Every field has a flag of the same
// meaning (see the package doc); the zero value plus DefaultOptions' values
// is a well-behaved agent.
type Options struct {
	// Identity and handshake.
	AgentName, AgentVersion string
	NoAgentInfo             bool
	ProtocolVersion         int  // <0: answer the requested version when supported, else 1
	EchoProtocolVersion     bool // answer whatever version was requested
	FailInitialize          int  // non-zero: answer initialize with this error code
	MalformedCapabilities   bool

	// Advertised capabilities.
	LoadSession, Resume, Close, Delete, MCPHTTP bool
	List, Modes, ConfigOptions                  bool
	PromptImage, PromptAudio, PromptEmbedded    bool // promptCapabilities

	// Authentication.
	AuthMethods       []string // advertised auth method ids (type agent)
	RequireAuth       bool     // session requests answer -32000 until authenticate succeeds
	AcceptUnknownAuth bool     // authenticate succeeds for any method id
	FailAuthenticate  int      // non-zero: authenticate with an advertised method answers this code

	// Sessions.
	FailNewSession       int    // non-zero: answer session/new with this error code
	StateDir             string // persist conversations here so another process can load them
	RecordMCP            string // append the MCP servers of every session request to this file
	AcceptUnknownSession bool
	Chatty               bool // send notifications between turns

	// Prompt content and client capabilities.
	RefuseResourceLink        bool // answer a prompt with a resource_link block -32602
	RefuseAdvertisedContent   bool // answer a prompt with an advertised image, audio or resource block -32602
	AcceptUnadvertisedContent bool // serve image, audio and resource blocks it does not advertise
	IgnoreClientCapabilities  bool // the tools word calls fs and terminal methods the client did not offer

	// Turns.
	Words              string        // prompt words applied to every prompt
	SlowFor            time.Duration // how long a slow turn lasts at most
	CancelStopReason   string        // the stop reason a cancelled turn ends with
	CancelAfterRefusal bool          // end a turn whose permission was refused with stop reason cancelled
	StopAtRefusal      bool          // end a turn with end_turn right at a refused permission, sending nothing more
	LateUpdates        bool          // send a turn's last chunk after the prompt response
	PromptError        int           // non-zero: answer every prompt with this error code
	OversizeBytes      int           // size of the line the "oversize" word writes
	// Cancellation faults.
	CancelledPermissionError bool // a permission answered cancelled fails the turn with -32603
	StickyCancel             bool // a session/cancel with no turn running cancels the next turn
	StuckAfterCancel         bool // after a cancelled turn, every prompt of the session is -32603

	// Continuation and teardown methods.
	LoadReplayAfterResponse bool
	ResumeReplays           bool
	FailClose, FailDelete   bool
	CloseKeepsSession       bool // session/close succeeds but the session keeps serving prompts
	DeleteStrict            bool // session/delete of an unknown id is -32002

	// Listing, modes and configuration options.
	ListPageSize            int  // sessions per session/list page
	ListCursorLoop          bool // every page names the same next cursor
	ListOmitNewest          bool // session/list leaves out the newest session
	ListIgnoreCwd           bool // session/list ignores its cwd filter
	ModeIDsURL              bool // mode ids are URLs, as Copilot CLI's are
	SetModeError            bool // session/set_mode to an advertised mode is -32603
	SetModeAcceptsUnknown   bool // session/set_mode to an unknown mode succeeds
	SilentSetMode           bool // session/set_mode sends no current_mode_update
	ModeUpdateAsConfig      bool // session/set_mode is confirmed by a config_option_update of a mode option
	SetConfigStale          bool // session/set_config_option answers the old value
	SetConfigAcceptsUnknown bool // session/set_config_option accepts unknown options and values

	// Protocol-level faults.
	RejectMeta            bool // a request whose params carry _meta is -32602
	RejectUnknownMembers  bool // a request whose params carry a member its type lacks is -32602
	UnknownMethodCode     int  // the code unknown methods are answered with
	AnswerNotifications   bool
	DropCancelledRequests bool // never answer a prompt cancelled with $/cancel_request
	DieOnGarbage          bool

	// Process-level faults.
	LogEnv            []string // log these environment variables' values at start (a leaky agent)
	IgnoreStdinClose  bool
	IgnoreSIGTERM     bool
	Descendant        string // "", "group" or "detached"
	DescendantFor     time.Duration
	DescendantPIDFile string

	// Network: serve on Listen (host:port) over Transport instead of
	// stdio (see Listen).
	Listen, Transport string

	// args are the command-line arguments ParseFlags read.
	args []string
	// beDescendant is the hidden mode the descendant itself runs in.
	beDescendant time.Duration
	// version: --version, print the version line and exit.
	version bool
	// writeQueue overrides the connection's outgoing queue length (tests
	// use 1 to make every multi-line write wait on the writer).
	writeQueue int
}

// DefaultOptions is a cooperative agent with no optional capability.
func DefaultOptions() Options {
	return Options{
		AgentName:         "acpkit-refagent",
		AgentVersion:      "1.0.0",
		ProtocolVersion:   -1,
		SlowFor:           30 * time.Second,
		CancelStopReason:  "cancelled",
		OversizeBytes:     10<<20 + 1,
		ListPageSize:      10,
		UnknownMethodCode: -32601,
		DescendantFor:     60 * time.Second,
	}
}

// synopsis heads refagent's --help.
const synopsis = `usage: refagent [flags]

The deterministic reference ACP agent on stdin and stdout. What a turn does
is chosen by the words of its prompt (and --words); the flags choose the
handshake, the capabilities and the misbehaviours. The package
acpkit.dev/conformance/refagent documents both.`

// ParseFlags parses the command line into Options. A command line it
// cannot run is reported on stderr (nil: not at all) with the short usage
// and returns an error wrapping ErrUsage; --help returns one wrapping
// cmdline.ErrHelp, for the caller to print Help.
func ParseFlags(args []string, stderr io.Writer) (Options, error) {
	o := DefaultOptions()
	o.args = args
	fs := flagSet(&o)
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = cmdline.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if err == nil {
		err = o.check()
	}
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		return o, err
	case err != nil:
		if stderr != nil {
			fs.Fail(stderr, err)
		}
		return o, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return o, nil
}

// Help writes refagent's usage and flags to w.
func Help(w io.Writer) {
	o := DefaultOptions()
	flagSet(&o).Help(w)
}

// flagSet defines refagent's flags on o.
func flagSet(o *Options) *cmdline.FlagSet {
	fs := cmdline.New("refagent", synopsis)
	fs.StringVar(&o.AgentName, "agent-name", o.AgentName, "agentInfo.name")
	fs.StringVar(&o.AgentVersion, "agent-version", o.AgentVersion, "agentInfo.version")
	fs.BoolVar(&o.NoAgentInfo, "no-agent-info", false, "answer initialize without agentInfo")
	fs.IntVar(&o.ProtocolVersion, "protocol-version", o.ProtocolVersion, "answer initialize with this protocolVersion (negative: negotiate)")
	fs.BoolVar(&o.EchoProtocolVersion, "echo-protocol-version", false, "answer initialize with the requested protocolVersion, even one it does not support")
	fs.IntVar(&o.FailInitialize, "fail-initialize", 0, "answer initialize with this JSON-RPC error code")
	fs.BoolVar(&o.MalformedCapabilities, "malformed-capabilities", false, "advertise capabilities with wrong JSON types")
	fs.BoolVar(&o.LoadSession, "load-session", false, "advertise and serve session/load")
	fs.BoolVar(&o.Resume, "resume", false, "advertise and serve session/resume")
	fs.BoolVar(&o.Close, "close", false, "advertise and serve session/close")
	fs.BoolVar(&o.Delete, "delete", false, "advertise and serve session/delete")
	fs.BoolVar(&o.MCPHTTP, "mcp-http", false, "advertise mcpCapabilities.http")
	fs.BoolVar(&o.List, "list", false, "advertise and serve session/list")
	fs.BoolVar(&o.PromptImage, "prompt-image", false, "advertise promptCapabilities.image and serve image blocks")
	fs.BoolVar(&o.PromptAudio, "prompt-audio", false, "advertise promptCapabilities.audio and serve audio blocks")
	fs.BoolVar(&o.PromptEmbedded, "prompt-embedded-context", false, "advertise promptCapabilities.embeddedContext and serve resource blocks")
	fs.BoolVar(&o.RefuseResourceLink, "refuse-resource-link", false, "answer a prompt holding a resource_link block with -32602")
	fs.BoolVar(&o.RefuseAdvertisedContent, "refuse-advertised-content", false, "answer a prompt holding an image, audio or resource block with -32602, advertised or not")
	fs.BoolVar(&o.AcceptUnadvertisedContent, "accept-unadvertised-content", false, "serve image, audio and resource blocks it does not advertise")
	fs.BoolVar(&o.IgnoreClientCapabilities, "ignore-client-capabilities", false, "make the tools word call fs/read_text_file and terminal/create even when the client did not offer them")
	fs.BoolVar(&o.Modes, "modes", false, "offer session modes (ask, code) and serve session/set_mode")
	fs.BoolVar(&o.ConfigOptions, "config-options", false, "offer a select configuration option (effort: low, high) and serve session/set_config_option")
	fs.Func("auth-methods", "advertise these comma-separated auth method ids (type agent) and serve authenticate", func(v string) error {
		o.AuthMethods = nil
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				o.AuthMethods = append(o.AuthMethods, id)
			}
		}
		return nil
	})
	fs.BoolVar(&o.RequireAuth, "require-auth", false, "answer session/new, load and resume with -32000 until authenticate succeeded")
	fs.BoolVar(&o.AcceptUnknownAuth, "accept-unknown-auth", false, "answer authenticate with success even for a method id it never advertised")
	fs.IntVar(&o.FailAuthenticate, "fail-authenticate", 0, "answer authenticate for an advertised method with this JSON-RPC error code")
	fs.IntVar(&o.FailNewSession, "fail-new-session", 0, "answer session/new with this JSON-RPC error code (e.g. -32000)")
	fs.StringVar(&o.StateDir, "state-dir", "", "directory to persist conversations in, for session/load across processes")
	fs.StringVar(&o.RecordMCP, "record-mcp", "", "append each session request's mcpServers as a JSON line to this file")
	fs.BoolVar(&o.AcceptUnknownSession, "accept-unknown-session", false, "serve prompts for session ids it never created")
	fs.BoolVar(&o.Chatty, "chatty", false, "send notifications between turns")
	fs.StringVar(&o.Words, "words", "", "prompt words applied to every prompt (see the package doc)")
	fs.DurationVar(&o.SlowFor, "slow-for", o.SlowFor, "how long a slow turn lasts at most")
	fs.StringVar(&o.CancelStopReason, "cancel-stop-reason", o.CancelStopReason, "stop reason a cancelled turn ends with")
	fs.BoolVar(&o.CancelAfterRefusal, "cancel-after-refusal", false, "end a turn whose permission request was refused with stop reason cancelled (as codex-acp does)")
	fs.BoolVar(&o.StopAtRefusal, "stop-at-refusal", false, "end a turn with end_turn right at a refused permission, sending nothing more (as Copilot CLI, OpenCode and Qwen Code do)")
	fs.BoolVar(&o.CancelledPermissionError, "cancelled-permission-error", false, "fail a turn with -32603 when its permission request is answered cancelled (an uncaught cancellation)")
	fs.BoolVar(&o.StickyCancel, "sticky-cancel", false, "remember a session/cancel sent while no turn runs and cancel the session's next turn with it")
	fs.BoolVar(&o.StuckAfterCancel, "stuck-after-cancel", false, "answer every prompt of a session whose turn was cancelled with -32603")
	fs.BoolVar(&o.RejectMeta, "reject-meta", false, "answer a request whose params carry _meta with -32602")
	fs.BoolVar(&o.RejectUnknownMembers, "reject-unknown-members", false, "answer a request whose params carry a member its params type does not define with -32602")
	fs.BoolVar(&o.LateUpdates, "late-updates", false, "send each turn's last message chunk after the prompt response")
	fs.IntVar(&o.PromptError, "prompt-error", 0, "answer every session/prompt with this JSON-RPC error code")
	fs.IntVar(&o.OversizeBytes, "oversize-bytes", o.OversizeBytes, "length of the line the oversize word writes")
	fs.BoolVar(&o.LoadReplayAfterResponse, "load-replay-after-response", false, "answer session/load before replaying")
	fs.BoolVar(&o.ResumeReplays, "resume-replays", false, "replay the conversation on session/resume")
	fs.BoolVar(&o.FailClose, "fail-close", false, "answer session/close with an internal error")
	fs.BoolVar(&o.FailDelete, "fail-delete", false, "answer session/delete with an internal error")
	fs.BoolVar(&o.CloseKeepsSession, "close-keeps-session", false, "answer session/close with success but keep serving the session's prompts")
	fs.BoolVar(&o.DeleteStrict, "delete-strict", false, "answer session/delete of an unknown id with -32002")
	fs.IntVar(&o.ListPageSize, "list-page-size", o.ListPageSize, "sessions per session/list page")
	fs.BoolVar(&o.ListCursorLoop, "list-cursor-loop", false, "name the same nextCursor on every session/list page, so paging never ends")
	fs.BoolVar(&o.ListOmitNewest, "list-omit-newest", false, "leave the newest session out of session/list")
	fs.BoolVar(&o.ListIgnoreCwd, "list-ignore-cwd", false, "ignore session/list's cwd filter")
	fs.BoolVar(&o.ModeIDsURL, "mode-ids-url", false, "make the mode ids URLs, as Copilot CLI's are")
	fs.BoolVar(&o.SetModeError, "set-mode-error", false, "answer session/set_mode to an advertised mode with an internal error")
	fs.BoolVar(&o.SetModeAcceptsUnknown, "set-mode-accepts-unknown", false, "answer session/set_mode to a mode it never advertised with success")
	fs.BoolVar(&o.SilentSetMode, "silent-set-mode", false, "send no current_mode_update after session/set_mode")
	fs.BoolVar(&o.ModeUpdateAsConfig, "mode-update-as-config", false, "confirm session/set_mode with a config_option_update of a mode option instead of a current_mode_update, as claude-agent-acp and codex-acp do")
	fs.BoolVar(&o.SetConfigStale, "set-config-stale", false, "answer session/set_config_option with the option's old value")
	fs.BoolVar(&o.SetConfigAcceptsUnknown, "set-config-accepts-unknown", false, "answer session/set_config_option for unknown options and values with success")
	fs.IntVar(&o.UnknownMethodCode, "unknown-method-code", o.UnknownMethodCode, "JSON-RPC error code for unknown methods")
	fs.BoolVar(&o.AnswerNotifications, "answer-notifications", false, "answer unknown notifications with an error response")
	fs.BoolVar(&o.DropCancelledRequests, "drop-cancelled-requests", false, "never answer a slow prompt cancelled with $/cancel_request")
	fs.BoolVar(&o.DieOnGarbage, "die-on-garbage", false, "exit with status 3 on a line that is not JSON")
	fs.Func("log-env", "log the value of environment variable `NAME` to stderr at start, as a leaky agent does (repeatable)", func(v string) error {
		o.LogEnv = append(o.LogEnv, v)
		return nil
	})
	fs.BoolVar(&o.IgnoreStdinClose, "ignore-stdin-close", false, "keep running after stdin closes")
	fs.BoolVar(&o.IgnoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM")
	fs.StringVar(&o.Descendant, "descendant", "", "at start, fork a descendant holding stdout: \"group\" (same process group) or \"detached\" (its own group)")
	fs.DurationVar(&o.DescendantFor, "descendant-for", o.DescendantFor, "how long the descendant lives")
	fs.StringVar(&o.DescendantPIDFile, "descendant-pidfile", "", "write the descendant's pid to this file")
	fs.StringVar(&o.Listen, "listen", "", "serve over the network on this host:port (127.0.0.1:0 picks a free port) instead of stdio")
	fs.StringVar(&o.Transport, "transport", TransportHTTP, "with --listen: http (Streamable HTTP and WebSocket on /acp), ws (the same, printed as ws://) or tcp")
	fs.DurationVar(&o.beDescendant, "be-descendant", 0, "internal: run as the stdout-holding descendant for this long")
	_ = fs.MarkHidden("be-descendant")
	fs.BoolVar(&o.version, "version", false, "print refagent's version and exit")
	return fs
}

// check rejects flag values with no meaning.
func (o *Options) check() error {
	switch o.Descendant {
	case "", "group", "detached":
	default:
		return cmdline.Usagef("--descendant must be group or detached, not %q", o.Descendant)
	}
	if o.ListPageSize < 1 {
		return cmdline.Usagef("--list-page-size must be at least 1")
	}
	switch o.Transport {
	case TransportHTTP, TransportWS, TransportTCP:
	default:
		return cmdline.Usagef("--transport must be http, ws or tcp, not %q", o.Transport)
	}
	if _, err := ParseWords(o.Words); err != nil {
		return cmdline.Usagef("--words: %v", err)
	}
	return nil
}
