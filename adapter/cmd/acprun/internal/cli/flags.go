package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"acpkit.dev/adapter"
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
	// JSON selects one JSON object per line on stdout.
	JSON bool
	// Demo runs the demo prompt set against the reference agent.
	Demo bool
	// LogLevel is the lowest adapter log level written to stderr.
	LogLevel slog.Level
	// Prompts are the turns to run, in order: the positional prompts and
	// the --file contents as they stand on the command line, "-" replaced
	// by standard input.
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
type UsageError struct{ Reason string }

// Error returns the reason.
func (e *UsageError) Error() string { return e.Reason }

// errHelp reports that -h or --help was asked for; the usage text is printed
// and acprun exits 0.
var errHelp = errors.New("help requested")

// credentialPrompt is the verification prompt of AU-2.
const credentialPrompt = "Say exactly: SORTIE_CREDENTIAL_OK"

const usageHead = `usage: acprun [flags] [prompt ...]
       acprun refagent [refagent flags]   (the reference agent on stdio)
       acprun replay FILE                 (a recorded runtime on stdio)

Drives one session of an Agent Client Protocol runtime through Sortie's
adapter, one turn per prompt, and shows every normalized event. Flags may
stand anywhere on the line; "--" ends them. A prompt "-" is read from
standard input.

Exit status: 0 every turn completed, 2 usage error, 3 start failed (or,
with --resume-policy required, the saved session was not continued),
4 a turn failed, 5 cancelled, 6 input required (the run needs a person).

Flags:
`

// flagInput is what parsing reads besides the arguments.
type flagInput struct {
	// stderr receives the usage text and the flag package's complaints.
	stderr io.Writer
	// stdin supplies the prompt "-".
	stdin io.Reader
	// getwd supplies the default workspace and the base for relative paths.
	getwd func() (string, error)
	// readFile reads a --file prompt; nil means os.ReadFile.
	readFile func(string) ([]byte, error)
}

// parseFlags parses args (without the program name).
func parseFlags(args []string, in flagInput) (Config, error) {
	var c Config
	var logLevel string
	var prompts []promptSource
	fs := flag.NewFlagSet("acprun", flag.ContinueOnError)
	fs.SetOutput(in.stderr)
	fs.Usage = func() {
		fmt.Fprint(in.stderr, usageHead)
		fs.PrintDefaults()
	}
	// One line per flag; the README's flag table lists each (readme_test.go).
	fs.StringVar(&c.Command, "command", "", "the runtime and its protocol-mode switch, e.g. \"gemini --acp\" (default: the reference agent inside acprun)")
	fs.StringVar(&c.Cwd, "cwd", "", "the workspace the runtime works in (default: the current directory)")
	fs.StringVar(&c.Resume, "resume", "", "continue the saved session with this `ID`")
	fs.StringVar(&c.ResumePolicy, "resume-policy", resumePrefer, "when --resume cannot continue the saved session: \"prefer\" starts a new one, \"required\" exits 3 (exit_reason resume_not_continued)")
	fs.StringVar(&c.MCPConfig, "mcp-config", "", "declare the MCP servers of this JSON `PATH` to the runtime")
	fs.StringVar(&c.SSHHost, "ssh-host", "", "run the runtime on this `HOST` over ssh; the workspace path must exist there too")
	fs.StringVar(&c.SSHStrictHostKeyChecking, "ssh-strict-host-key-checking", "", "ssh's host key `POLICY` with --ssh-host: accept-new (default), yes or no")
	fs.Func("ssh-pass-env", "carry the environment variable `NAME` to the remote runtime (repeatable)", func(name string) error {
		c.SSHPassEnv = append(c.SSHPassEnv, name)
		return nil
	})
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 0, "bound on each wait for the runtime (default: the adapter's, 30s)")
	fs.DurationVar(&c.StopGrace, "stop-grace", 0, "graceful window when stopping the runtime (default: the adapter's, 5s)")
	fs.DurationVar(&c.TurnTimeout, "turn-timeout", 0, "bound on each turn; 0 means none")
	fs.BoolVar(&c.VerifyCredential, "verify-credential", false, "run a credential-verification session instead of prompts")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object per line instead of the readable view")
	fs.BoolVar(&c.Demo, "demo", false, "run the demo prompts against the reference agent")
	fs.StringVar(&logLevel, "log-level", "warn", "adapter log records written to stderr: debug, info, warn or error")
	fs.Func("file", "send the contents of this `PATH` as a prompt (repeatable; in order with the other prompts)", func(p string) error {
		prompts = append(prompts, promptSource{file: p})
		return nil
	})
	fs.BoolVar(&c.Version, "version", false, "print acprun's version and exit")
	fs.BoolVar(&c.Verbose, "verbose", false, "also show thought text, plan entries and each tool call's input and output")
	fs.BoolVar(&c.Verbose, "v", false, "short for --verbose")
	fs.StringVar(&c.Record, "record", "", "write the session's transcript (every line both ways, stderr, process events) to this `FILE`; `acprun replay FILE` plays it back")
	fs.BoolVar(&c.QuietStall, "quiet-stall", false, "with --json, leave out the empty notifications that only reset stall timers")
	fs.StringVar((*string)(&c.Containment), "containment", string(adapter.ContainmentAuto), "how the runtime's descendants are ended with the session: auto (a cgroup where one can be made, else a tracked set), tracked or off (its process group only)")
	if err := parseInterleaved(fs, args, func(p string) { prompts = append(prompts, promptSource{text: p}) }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, errHelp
		}
		// The flag package already printed the problem and the usage.
		return Config{}, &UsageError{Reason: err.Error()}
	}
	if c.Version {
		return c, nil
	}
	fs.Visit(func(f *flag.Flag) { c.CommandGiven = c.CommandGiven || f.Name == "command" })
	if err := c.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return Config{}, &UsageError{Reason: fmt.Sprintf("--log-level %q: want debug, info, warn or error", logLevel)}
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

// parseInterleaved parses flags wherever they stand among the positional
// arguments, handing each positional one to positional in order; after
// "--" every argument is positional.
func parseInterleaved(fs *flag.FlagSet, args []string, positional func(string)) error {
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			// The flag package stopped at "--" (never a flag's value here:
			// it consumed it as the terminator).
			for _, a := range rest {
				positional(a)
			}
			return nil
		}
		positional(rest[0])
		args = rest[1:]
	}
}

// promptSource is one prompt as the command line gave it.
type promptSource struct {
	text string // a positional prompt; "-" means standard input
	file string // --file PATH
}

// readPrompts resolves the prompt sources: files are read (relative to wd),
// "-" takes all of stdin, at most once.
func readPrompts(srcs []promptSource, wd string, stdin io.Reader, readFile func(string) ([]byte, error)) ([]string, error) {
	var out []string
	stdinUsed := false
	for _, s := range srcs {
		switch {
		case s.file != "":
			b, err := readFile(absFrom(wd, s.file))
			if err != nil {
				return nil, &UsageError{Reason: fmt.Sprintf("--file: %v", err)}
			}
			out = append(out, string(b))
		case s.text == "-":
			if stdinUsed {
				return nil, &UsageError{Reason: `the prompt "-" (standard input) may be given once`}
			}
			stdinUsed = true
			if stdin == nil {
				stdin = eofReader{}
			}
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, &UsageError{Reason: fmt.Sprintf("reading the prompt from standard input: %v", err)}
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
			return &UsageError{Reason: d.name + " must not be negative"}
		}
	}
	if c.ResumePolicy != resumePrefer && c.ResumePolicy != resumeRequired {
		return &UsageError{Reason: fmt.Sprintf("--resume-policy %q: want prefer or required", c.ResumePolicy)}
	}
	if !slices.Contains(adapter.Containments, c.Containment) {
		return &UsageError{Reason: fmt.Sprintf("--containment %q: want auto, tracked or off", c.Containment)}
	}
	switch c.SSHStrictHostKeyChecking {
	case "", "accept-new", "yes", "no":
	default:
		return &UsageError{Reason: fmt.Sprintf("--ssh-strict-host-key-checking %q: want accept-new, yes or no", c.SSHStrictHostKeyChecking)}
	}
	switch {
	case c.SSHHost == "" && (c.SSHStrictHostKeyChecking != "" || len(c.SSHPassEnv) > 0):
		return &UsageError{Reason: "--ssh-strict-host-key-checking and --ssh-pass-env apply to a remote run: add --ssh-host"}
	case c.Demo && (c.CommandGiven || len(c.Prompts) > 0 || c.VerifyCredential || c.Resume != ""):
		return &UsageError{Reason: "--demo runs its own prompts against the reference agent; it takes no --command, --resume, --verify-credential or prompt"}
	case c.VerifyCredential && (len(c.Prompts) > 0 || c.Resume != "" || c.MCPConfig != ""):
		// A verification session never continues a session and declares no
		// tool servers (CL-3), and its prompt is fixed (AU-2).
		return &UsageError{Reason: "--verify-credential sends its own prompt and takes no --resume, --mcp-config or prompt"}
	case !c.Demo && !c.VerifyCredential && len(c.Prompts) == 0:
		return &UsageError{Reason: "no prompt given: pass at least one prompt, --file, \"-\" (standard input), --demo or --verify-credential"}
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
