package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/mcpconfig"
	"acpkit.dev/internal/cmdline"
)

// Config is acprun's parsed command line.
type Config struct {
	// Command is agent.command, used when CommandGiven.
	Command string
	// CommandGiven is false when --command was absent: the reference agent
	// runs. A given but blank command reaches the adapter, which reports
	// agent_not_found (CFG-2).
	CommandGiven bool
	// Cwd is the absolute workspace path.
	Cwd string
	// Resume is a saved session id to continue.
	Resume string
	// ResumePolicy is resumePrefer or resumeRequired.
	ResumePolicy string
	// MCPConfig is the absolute path of an MCP server file, or "".
	MCPConfig string
	// URL, when set, is a runtime served over the network that the
	// session connects to instead of launching one (adapter.WithDialer).
	URL string
	// SSHHost, when set, runs the runtime on that host over ssh (§21);
	// SSHStrictHostKeyChecking and SSHPassEnv go with it.
	SSHHost                  string
	SSHStrictHostKeyChecking string
	SSHPassEnv               []string
	// ReadTimeout, StopGrace and TurnTimeout are zero when not given, which
	// leaves the adapter's own defaults (CFG-5, CFG-6) and no turn bound.
	ReadTimeout time.Duration
	StopGrace   time.Duration
	TurnTimeout time.Duration
	// VerifyCredential runs a credential-verification session (AU-2).
	VerifyCredential bool
	// Permissions is the permission policy: permRefuse (the default, the
	// adapter's own refusal), permAsk, permApproveReads or permApproveAll.
	Permissions string
	// AuthMethod, when set, authenticates with this advertised method
	// before the session starts (AU-5).
	AuthMethod string
	// JSON selects one JSON object per line on stdout.
	JSON bool
	// Final prints only the last agent message on stdout.
	Final bool
	// Demo runs the demo prompt set against the reference agent.
	Demo bool
	// LogLevel is the lowest adapter log level written to stderr;
	// LogLevelGiven says --log-level was on the command line.
	LogLevel      slog.Level
	LogLevelGiven bool
	// Prompts are the turns to run, in order: the positional prompts and
	// the --file contents as they stand on the command line; "-" is
	// standard input, joined to the prompt before it when there is one.
	Prompts []string
	// Version prints acprun's version and exits.
	Version bool
	// Verbose adds thoughts, plans and tool inputs and outputs to the
	// readable view.
	Verbose bool
	// QuietStall drops the empty stall-reset notifications from --json.
	QuietStall bool
	// Record is the absolute path of a transcript to write, or "".
	Record string
	// Containment is how the session contains its runtime's descendants
	// (TD-15): auto (the default), tracked or off.
	Containment adapter.Containment
}

// UsageError is a command line acprun cannot run; it maps to exit status 2.
type UsageError = cmdline.UsageError

// credentialPrompt is the verification prompt of AU-2.
const credentialPrompt = "Say exactly: SORTIE_CREDENTIAL_OK"

// Permission policies (--permissions).
const (
	permRefuse       = "refuse"
	permAsk          = "ask"
	permApproveReads = "approve-reads"
	permApproveAll   = "approve-all"
)

const usageHead = `usage: acprun [flags] [prompt ...] [-]
       acprun refagent [refagent flags]   (the reference agent on stdio)
       acprun replay FILE                 (a recorded runtime on stdio)
       acprun show FILE                   (a recording as a timeline)

Drives one session of an Agent Client Protocol runtime through Sortie's
adapter, one turn per prompt, and shows every normalized event. Flags may
stand anywhere on the line; "--" ends them. A prompt "-" is standard input:
after a prompt it joins that prompt's turn (the prompt, a blank line, then
standard input), alone it is a turn of its own.

Exit status: 0 every turn completed, 2 usage error, 3 start failed (or,
with --resume-policy required, the saved session was not continued),
4 a turn failed, 5 cancelled, 6 input required (the run needs a person).`

// flagInput is what parsing reads besides the arguments.
type flagInput struct {
	// stdin supplies the prompt "-".
	stdin io.Reader
	// getwd supplies the default workspace and the base for relative paths.
	getwd func() (string, error)
	// readFile reads a --file prompt; nil means os.ReadFile.
	readFile func(string) ([]byte, error)
	// checkMCP reads and checks an --mcp-config file as the adapter will;
	// nil means the adapter's own parser.
	checkMCP func(path string) error
}

// checkMCPConfig reads path as the adapter reads a local launch's MCP
// file (MCP-4, MCP-5).
func checkMCPConfig(path string) error {
	_, err := mcpconfig.Load(path, false)
	return err
}

// newFlagSet defines acprun's flags on c; prompts receives --file in
// command-line order.
func newFlagSet(c *Config, logLevel *string, prompts *[]promptSource) *cmdline.FlagSet {
	fs := cmdline.New("acprun", usageHead)
	// One line per flag; the README's flag table lists each (readme_test.go).
	fs.StringVar(&c.Command, "command", "", "the runtime and its protocol-mode switch, e.g. \"gemini --acp\" (default: the reference agent inside acprun)")
	fs.StringVar(&c.Cwd, "cwd", "", "the workspace the runtime works in (default: the current directory)")
	fs.StringVar(&c.Resume, "resume", "", "continue the saved session with this `ID`")
	fs.StringVar(&c.ResumePolicy, "resume-policy", resumePrefer, "when --resume cannot continue the saved session: \"prefer\" starts a new one, \"required\" exits 3 (exit_reason resume_not_continued)")
	fs.StringVar(&c.Permissions, "permissions", permRefuse, "`POLICY` for the runtime's permission requests: refuse (the unattended default), ask (y/N on the terminal), approve-reads (read, search, fetch and think only) or approve-all")
	fs.StringVar(&c.AuthMethod, "auth-method", "", "call authenticate with this advertised auth method `ID` before the session starts")
	fs.StringVar(&c.MCPConfig, "mcp-config", "", "declare the MCP servers of this JSON `PATH` to the runtime")
	fs.StringVar(&c.URL, "url", "", "drive the runtime served at this http://, https://, ws://, wss:// or tcp:// `URL` instead of launching one")
	fs.StringVar(&c.SSHHost, "ssh-host", "", "run the runtime on this `HOST` over ssh; the workspace path must exist there too")
	fs.StringVar(&c.SSHStrictHostKeyChecking, "ssh-strict-host-key-checking", "", "ssh's host key `POLICY` with --ssh-host: accept-new (default), yes or no")
	fs.Func("ssh-pass-env", "carry the environment variable `NAME` to the remote runtime (repeatable)", func(name string) error {
		c.SSHPassEnv = append(c.SSHPassEnv, name)
		return nil
	})
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 0, "bound on each wait for the runtime, e.g. 30s (a bare number is seconds; default: the adapter's, 30s)")
	fs.DurationVar(&c.StopGrace, "stop-grace", 0, "graceful window when stopping the runtime (default: the adapter's, 5s)")
	fs.DurationVar(&c.TurnTimeout, "turn-timeout", 0, "bound on each turn; 0 means none")
	fs.BoolVar(&c.VerifyCredential, "verify-credential", false, "run a credential-verification session instead of prompts")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object per line instead of the readable view")
	fs.BoolVar(&c.Final, "final", false, "print only the last agent message (for scripts); failures go to stderr")
	fs.BoolVar(&c.Demo, "demo", false, "run the demo prompts against the reference agent")
	fs.StringVar(logLevel, "log-level", "warn", "adapter log records written to stderr: debug, info, warn or error")
	fs.Func("file", "send the contents of this `PATH` as a prompt (repeatable; in order with the other prompts)", func(p string) error {
		*prompts = append(*prompts, promptSource{file: p})
		return nil
	})
	fs.BoolVar(&c.Version, "version", false, "print acprun's version and exit")
	fs.BoolVarP(&c.Verbose, "verbose", "v", false, "also show thought text, plan entries and each tool call's input and output")
	fs.StringVar(&c.Record, "record", "", "write the session's transcript (every line both ways, stderr, process events) to this `FILE`; `acprun replay FILE` plays it back, `acprun show FILE` prints it")
	fs.BoolVar(&c.QuietStall, "quiet-stall", false, "with --json, leave out the empty notifications that only reset stall timers")
	fs.StringVar((*string)(&c.Containment), "containment", string(adapter.ContainmentAuto), "how the runtime's descendants are ended with the session: auto (a cgroup where one can be made, else a tracked set), tracked or off (its process group only)")
	return fs
}

// help writes acprun's usage and flags to w (--help, on stdout).
func help(w io.Writer) {
	var c Config
	var level string
	var prompts []promptSource
	newFlagSet(&c, &level, &prompts).Help(w)
}

// parseFlags parses args (without the program name). It returns
// cmdline.ErrHelp for --help and a *UsageError for a command line that
// cannot run.
func parseFlags(args []string, in flagInput) (Config, error) {
	var c Config
	var logLevel string
	var prompts []promptSource
	fs := newFlagSet(&c, &logLevel, &prompts)
	if err := fs.ParseInterleaved(args, func(p string) { prompts = append(prompts, promptSource{text: p}) }); err != nil {
		return Config{}, err
	}
	if c.Version {
		return c, nil
	}
	c.CommandGiven = fs.Changed("command")
	c.LogLevelGiven = fs.Changed("log-level")
	if err := c.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return Config{}, cmdline.Usagef("--log-level %q: want debug, info, warn or error", logLevel)
	}
	wd, err := in.getwd()
	if err != nil {
		return Config{}, fmt.Errorf("acprun: current directory: %w", err)
	}
	readFile := in.readFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	if c.Prompts, err = readPrompts(prompts, wd, in.stdin, readFile); err != nil {
		return Config{}, err
	}
	if err := c.check(); err != nil {
		return Config{}, err
	}
	c.Cwd = absFrom(wd, c.Cwd)
	if c.MCPConfig != "" {
		c.MCPConfig = absFrom(wd, c.MCPConfig)
		// A bad file is a usage error before anything starts, where the
		// adapter would refuse it only after the launch (MCP-5). Over ssh
		// no server is declared (MCP-2), so the file is not read.
		check := in.checkMCP
		if check == nil {
			check = checkMCPConfig
		}
		if c.SSHHost == "" {
			if err := check(c.MCPConfig); err != nil {
				return Config{}, cmdline.Usagef("--mcp-config %s: %v", c.MCPConfig, err)
			}
		}
	}
	if c.Record != "" {
		c.Record = absFrom(wd, c.Record)
	}
	switch {
	case c.VerifyCredential:
		c.Prompts = []string{credentialPrompt}
	case c.Demo:
		c.Prompts = append([]string(nil), demoPrompts...)
	}
	return c, nil
}

// promptSource is one prompt as the command line gave it.
type promptSource struct {
	text string // a positional prompt; "-" means standard input
	file string // --file PATH
}

// stdinPrompt is the positional prompt that reads standard input.
const stdinPrompt = "-"

// readPrompts resolves the prompt sources: files are read (relative to
// wd); "-" takes all of stdin, at most once, and joins the prompt before it
// — the prompt, a blank line, then stdin, as one turn — or, first on the
// line, is a turn of its own.
func readPrompts(srcs []promptSource, wd string, stdin io.Reader, readFile func(string) ([]byte, error)) ([]string, error) {
	var out []string
	stdinUsed := false
	for _, s := range srcs {
		switch {
		case s.file != "":
			b, err := readFile(absFrom(wd, s.file))
			if err != nil {
				return nil, cmdline.Usagef("--file: %v", err)
			}
			out = append(out, string(b))
		case s.text == stdinPrompt:
			if stdinUsed {
				return nil, cmdline.Usagef(`the prompt "-" (standard input) may be given once`)
			}
			stdinUsed = true
			if stdin == nil {
				stdin = eofReader{}
			}
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, cmdline.Usagef("reading the prompt from standard input: %v", err)
			}
			if n := len(out); n > 0 {
				out[n-1] = strings.TrimRight(out[n-1], "\n") + "\n\n" + string(b)
				continue
			}
			out = append(out, string(b))
		default:
			out = append(out, s.text)
		}
	}
	return out, nil
}

// eofReader is an empty standard input.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// check rejects flag combinations that have no meaning.
func (c *Config) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--read-timeout", c.ReadTimeout}, {"--stop-grace", c.StopGrace}, {"--turn-timeout", c.TurnTimeout}} {
		if d.v < 0 {
			return cmdline.Usagef("%s must not be negative", d.name)
		}
	}
	if c.ResumePolicy != resumePrefer && c.ResumePolicy != resumeRequired {
		return cmdline.Usagef("--resume-policy %q: want prefer or required", c.ResumePolicy)
	}
	switch c.Permissions {
	case permRefuse, permAsk, permApproveReads, permApproveAll:
	default:
		return cmdline.Usagef("--permissions %q: want refuse, ask, approve-reads or approve-all", c.Permissions)
	}
	if !slices.Contains(adapter.Containments, c.Containment) {
		return cmdline.Usagef("--containment %q: want auto, tracked or off", c.Containment)
	}
	switch c.SSHStrictHostKeyChecking {
	case "", "accept-new", "yes", "no":
	default:
		return cmdline.Usagef("--ssh-strict-host-key-checking %q: want accept-new, yes or no", c.SSHStrictHostKeyChecking)
	}
	switch {
	case c.URL != "" && (c.CommandGiven || c.SSHHost != "" || c.Demo):
		return &UsageError{Reason: "--url drives a runtime served elsewhere: it takes no --command, --ssh-host or --demo"}
	case c.SSHHost == "" && (c.SSHStrictHostKeyChecking != "" || len(c.SSHPassEnv) > 0):
		return cmdline.Usagef("--ssh-strict-host-key-checking and --ssh-pass-env apply to a remote run: add --ssh-host")
	case c.JSON && c.Final:
		return cmdline.Usagef("--json and --final are two different outputs: choose one")
	case c.Demo && (c.CommandGiven || len(c.Prompts) > 0 || c.VerifyCredential || c.Resume != ""):
		return cmdline.Usagef("--demo runs its own prompts against the reference agent; it takes no --command, --resume, --verify-credential or prompt")
	case c.VerifyCredential && (len(c.Prompts) > 0 || c.Resume != "" || c.MCPConfig != ""):
		// A verification session never continues a session and declares no
		// tool servers (CL-3), and its prompt is fixed (AU-2).
		return cmdline.Usagef("--verify-credential sends its own prompt and takes no --resume, --mcp-config or prompt")
	case !c.Demo && !c.VerifyCredential && len(c.Prompts) == 0:
		return cmdline.Usagef("no prompt given: pass at least one prompt, --file, \"-\" (standard input), --demo or --verify-credential")
	}
	return nil
}

// absFrom resolves p against wd; an empty p is wd itself.
func absFrom(wd, p string) string {
	if p == "" {
		return wd
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(wd, p)
}

// millis converts a flag duration to the adapter's millisecond fields,
// rounding a positive sub-millisecond value up so it never becomes "default".
func millis(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++
	}
	return int(ms)
}
