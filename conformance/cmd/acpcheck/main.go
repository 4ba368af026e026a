// Command acpcheck grades how far an ACP agent conforms to the protocol.
//
//	acpcheck --command "gemini --acp" [--cwd DIR] [--json] [--timeout D]
//	         [--exit-bound D] [--baseline FILE] [--only ID,ID] [-v]
//	         [--transcripts DIR] [--html FILE] [--auth-method ID] [--agent-env NAME[=VALUE]]…
//	         [--share-process]
//	acpcheck --url http://127.0.0.1:8080/acp [the same flags]
//	acpcheck --list
//	acpcheck --version
//
// It launches the command once per check (split on whitespace; no shell),
// or with --url connects once per check to an agent served at an http://,
// https://, ws://, wss:// or tcp:// URL (acpkit.dev/acpsdk/acpnet), where
// the checks that need a process (closing stdin, a signal) are skipped
// with that reason, and so is the one that sends a line that is not JSON
// over Streamable HTTP, whose transport answers it itself (with
// --share-process the checks that need the handshake or a session but
// nothing of the process's own share one process or connection in turn,
// process.sigterm ending it, a check not passing there graded again
// afresh);
// runs the registry of acpkit.dev/conformance/check, and prints a table of
// ID, tier, result and reason — or, with --json, one JSON report — followed
// by the wire transcript of every check that did not pass. Both name the
// agent graded (its initialize agentInfo). On a terminal a progress line
// on stderr shows the check running, its number and how long it has run.
// An agent that answers initialize or session/new with -32000 is logged
// out: the check that meets it reports "needs a credential", and every
// later check that needs a session is reported the same without launching
// the agent again; none of it is a failure, but none of it is graded
// either. A prompt answered with an authentication or backend error is
// "needs a working model", likewise once.
//
// The summary says how many mandatory checks were graded and, for the
// others, why not. The verdict and the exit status:
//
//	0  OK          every mandatory check ran and passed, and no
//	               advertised-capability check failed (known failures
//	               in --baseline excepted)
//	1  FAILED      a mandatory or advertised-capability check failed, or
//	               a baseline entry's check now passes (the baseline is
//	               stale)
//	2              the arguments are wrong or the agent cannot be launched
//	3  INCOMPLETE  nothing failed, but a mandatory check did not run
//	               (logged out, no working model, nothing to observe)
//
// With --only the verdict covers the checks chosen.
//
// Credentials, only when asked for: --auth-method ID authenticates with
// that method (the authenticate request) before the first session/new of
// every agent process, and auth.method grades authenticate itself with
// it. --agent-env NAME=VALUE (repeatable) sets a variable in the agent's
// environment; --agent-env NAME passes acpcheck's own value of NAME, so
// the value never appears on any command line. Values are masked ("***")
// in transcripts, reasons and reports, which name only the variables set.
//
// --html FILE also writes the report as one self-contained HTML page: the
// verdict, the table, and each check that did not pass with its transcript
// as a two-column exchange.
//
//	acpcheck client [flags] -- CLIENT-COMMAND [ARGS...]
//
// grades a client instead: acpcheck plays a scripted agent, and {agent} in
// the client's arguments is replaced by the command line that starts it
// (see client.go and acpkit.dev/conformance/check's client checks).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"acpkit.dev/conformance/check"
	"acpkit.dev/conformance/internal/scenario"
	"acpkit.dev/internal/cmdline"
)

func main() {
	// The graded client started acpcheck as its agent: by the link a
	// grading made, or by the subcommand.
	if socket, token, ok := scenario.FromLink(os.Args[0]); ok {
		os.Exit(scenario.Main([]string{socket, token}, os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == scenario.Command {
		os.Exit(scenario.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device, as a terminal is.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// synopsis heads acpcheck's --help.
const synopsis = `usage: acpcheck --command "AGENT COMMAND" [flags]
       acpcheck --url URL [flags]
       acpcheck client [flags] -- CLIENT-COMMAND [ARGS...]
       acpcheck --list | --version

Launches the agent (or connects to it) once per check and grades how far it conforms to the
Agent Client Protocol. Exit status: 0 every mandatory and advertised check
passed, 1 one failed (or the baseline is stale), 2 bad arguments or an
agent that cannot be launched.`

// run is acpcheck; live draws the progress line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, live bool) int {
	if len(args) > 0 && args[0] == "client" {
		return runClient(ctx, args[1:], stdout, stderr, live)
	}
	fs := cmdline.New("acpcheck", synopsis)
	command := fs.String("command", "", "the agent command line, e.g. \"gemini --acp\" (this or --url)")
	url := fs.String("url", "", "grade the agent served at this http://, https://, ws://, wss:// or tcp:// URL instead of launching one")
	cwd := fs.String("cwd", ".", "working directory for the agent and its sessions")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each wait for a response")
	exitBound := fs.Duration("exit-bound", 5*time.Second, "bound on each wait for the process to exit")
	baseline := fs.String("baseline", "", "file of known failures for this peer ("+baselineForm+")")
	only := fs.String("only", "", "comma-separated check IDs to run (default: all)")
	verbose := fs.BoolP("verbose", "v", false, "log each check as it finishes to stderr")
	list := fs.Bool("list", false, "list the checks (ID, tier, requirement, what it pins) and exit")
	transcripts := fs.String("transcripts", "", "write every check's wire transcript to `DIR`/<check ID>.jsonl (acprun's transcript format: acprun replay and acprun show read it)")
	version := fs.Bool("version", false, "print acpcheck's version and exit")
	html := fs.String("html", "", "also write the report as one self-contained HTML page to `FILE`")
	authMethod := fs.String("auth-method", "", "authenticate with this advertised auth method `ID` before every session/new (and grade authenticate with it)")
	share := fs.Bool("share-process", false, "run the checks that need the handshake or a session (not the process itself) on one initialized agent process, shared in turn, instead of a launch each, and end it with process.sigterm (a check that does not pass there is graded again on a fresh launch)")
	var env agentEnv
	fs.Var(&env, "agent-env", "set `NAME=VALUE` in the agent's environment (repeatable); NAME alone passes acpcheck's own value, keeping it off every command line; values are masked in transcripts and reports")
	switch err := fs.Parse(args); {
	case errors.Is(err, cmdline.ErrHelp):
		fs.Help(stdout)
		return 0
	case err != nil:
		return fs.Fail(stderr, err)
	}
	if *version {
		fmt.Fprintln(stdout, cmdline.Version("acpcheck"))
		return 0
	}
	if *list {
		listChecks(stdout, check.Standard())
		return 0
	}
	argv := strings.Fields(*command)
	switch {
	case len(argv) > 0 && *url != "":
		fmt.Fprintln(stderr, "acpcheck: give --command or --url, not both")
		return check.ExitUsage
	case len(argv) == 0 && *url == "":
		fmt.Fprintln(stderr, "acpcheck: --command or --url is required")
		return check.ExitUsage
	}
	dir, err := filepath.Abs(*cwd)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: --cwd: %v\n", err)
		return check.ExitUsage
	}
	reg := check.Standard()
	ids, err := parseOnly(reg, *only)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return check.ExitUsage
	}
	known, err := readBaseline(reg, *baseline)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return check.ExitUsage
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "acpcheck")
	}
	if err := prepareOutputs(*transcripts); err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return check.ExitUsage
	}
	target := check.Target{Argv: argv, URL: *url, Dir: dir}
	if len(env) > 0 {
		if target.Env, target.Secrets, err = env.apply(os.Environ(), os.LookupEnv); err != nil {
			fmt.Fprintf(stderr, "acpcheck: --agent-env: %v\n", err)
			return check.ExitUsage
		}
	}
	cfg := check.Config{
		Target:          target,
		AuthMethod:      *authMethod,
		Timeout:         *timeout,
		ExitBound:       *exitBound,
		Only:            ids,
		Logger:          logger,
		KeepTranscripts: *transcripts != "",
		ShareProcess:    *share,
	}
	var bar *progressLine
	if live {
		bar = startProgress(stderr)
		cfg.Progress = bar.set
	}
	rep, err := check.Grade(ctx, reg, cfg)
	bar.stop()
	return emit(ctx, rep, err, emitOptions{transcripts: *transcripts, html: *html, json: *asJSON, baseline: known, env: env.masked()}, stdout, stderr)
}
