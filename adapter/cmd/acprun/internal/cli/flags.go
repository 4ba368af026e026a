package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"
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
	// Prompts are the turns to run, in order.
	Prompts []string
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

Drives one session of an Agent Client Protocol runtime through Sortie's
adapter, one turn per prompt, and shows every normalized event.

Exit status: 0 every turn completed, 2 usage error, 3 start failed,
4 a turn failed, 5 cancelled, 6 input required (the run needs a person).

Flags:
`

// parseFlags parses args (without the program name). getwd supplies the
// default workspace and the base for relative paths.
func parseFlags(args []string, stderr io.Writer, getwd func() (string, error)) (Config, error) {
	var c Config
	var logLevel string
	fs := flag.NewFlagSet("acprun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.Command, "command", "", "the runtime and its protocol-mode switch, e.g. \"gemini --acp\" (default: the reference agent built from this repository)")
	fs.StringVar(&c.Cwd, "cwd", "", "the workspace the runtime works in (default: the current directory)")
	fs.StringVar(&c.Resume, "resume", "", "continue the saved session with this `ID`")
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, errHelp
		}
		// The flag package already printed the problem and the usage.
		return Config{}, &UsageError{Reason: err.Error()}
	}
	c.Prompts = fs.Args()
	fs.Visit(func(f *flag.Flag) { c.CommandGiven = c.CommandGiven || f.Name == "command" })
	if err := c.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return Config{}, &UsageError{Reason: fmt.Sprintf("--log-level %q: want debug, info, warn or error", logLevel)}
	}
	if err := c.check(); err != nil {
		return Config{}, err
	}
	wd, err := getwd()
	if err != nil {
		return Config{}, fmt.Errorf("acprun: current directory: %w", err)
	}
	c.Cwd = absFrom(wd, c.Cwd)
	if c.MCPConfig != "" {
		c.MCPConfig = absFrom(wd, c.MCPConfig)
	}
	switch {
	case c.VerifyCredential:
		c.Prompts = []string{credentialPrompt}
	case c.Demo:
		c.Prompts = append([]string(nil), demoPrompts...)
	}
	return c, nil
}

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
		return &UsageError{Reason: "no prompt given: pass at least one prompt, --demo or --verify-credential"}
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
