// Command acpcheck grades how far an ACP agent conforms to the protocol.
//
//	acpcheck --command "gemini --acp" [--cwd DIR] [--json] [--timeout D]
//	         [--exit-bound D] [--baseline FILE] [--only ID,ID] [-v]
//	         [--transcripts DIR]
//	acpcheck --url http://127.0.0.1:8080/acp [the same flags]
//	acpcheck --list
//	acpcheck --version
//
// It launches the command once per check (split on whitespace; no shell),
// or with --url connects once per check to an agent served at an http://,
// https://, ws://, wss:// or tcp:// URL (acpkit.dev/acpsdk/acpnet), where
// the checks that need a process (closing stdin, a signal) are skipped
// with that reason, and so is the one that sends a line that is not JSON
// over Streamable HTTP, whose transport answers it itself;
// runs the registry of acpkit.dev/conformance/check, and prints a table of
// ID, tier, result and reason — or, with --json, one JSON report — followed
// by the wire transcript of every check that did not pass. Both name the
// agent graded (its initialize agentInfo). On a terminal a progress line
// on stderr shows the check running, its number and how long it has run.
// An agent that answers initialize or session/new with -32000 is logged
// out: that check reports "needs a credential", the later ones that meet
// it skip, and none of it is a failure.
//
// Exit status: 0 when every mandatory and advertised-capability check
// passed (or is a known failure in --baseline); 1 when one failed, or when
// a baseline entry's check now passes (the baseline is stale); 2 when the
// arguments are wrong or the agent cannot be launched.
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
	"acpkit.dev/internal/cmdline"
)

func main() {
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
       acpcheck --list | --version

Launches the agent (or connects to it) once per check and grades how far it conforms to the
Agent Client Protocol. Exit status: 0 every mandatory and advertised check
passed, 1 one failed (or the baseline is stale), 2 bad arguments or an
agent that cannot be launched.`

// run is acpcheck; live draws the progress line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, live bool) int {
	fs := cmdline.New("acpcheck", synopsis)
	command := fs.String("command", "", "the agent command line, e.g. \"gemini --acp\" (this or --url)")
	url := fs.String("url", "", "grade the agent served at this http://, https://, ws://, wss:// or tcp:// URL instead of launching one")
	cwd := fs.String("cwd", ".", "working directory for the agent and its sessions")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each wait for a response")
	exitBound := fs.Duration("exit-bound", 5*time.Second, "bound on each wait for the process to exit")
	baseline := fs.String("baseline", "", "file of known failures for this peer (\"CHECK-ID note\" per line)")
	only := fs.String("only", "", "comma-separated check IDs to run (default: all)")
	verbose := fs.BoolP("verbose", "v", false, "log each check as it finishes to stderr")
	list := fs.Bool("list", false, "list the checks (ID, tier, requirement) and exit")
	transcripts := fs.String("transcripts", "", "write every check's wire transcript to `DIR`/<check ID>.txt")
	version := fs.Bool("version", false, "print acpcheck's version and exit")
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
		for _, c := range check.Standard().Checks() {
			fmt.Fprintf(stdout, "%-32s %-10s %s\n", c.ID, c.Tier, c.Title)
		}
		return 0
	}
	argv := strings.Fields(*command)
	switch {
	case len(argv) > 0 && *url != "":
		fmt.Fprintln(stderr, "acpcheck: give --command or --url, not both")
		return 2
	case len(argv) == 0 && *url == "":
		fmt.Fprintln(stderr, "acpcheck: --command or --url is required")
		return 2
	}
	dir, err := filepath.Abs(*cwd)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: --cwd: %v\n", err)
		return 2
	}
	reg := check.Standard()
	var ids []string
	if *only != "" {
		for _, id := range strings.Split(*only, ",") {
			id = strings.TrimSpace(id)
			if _, ok := reg.Lookup(id); !ok {
				fmt.Fprintf(stderr, "acpcheck: --only: unknown check %q\n", id)
				return 2
			}
			ids = append(ids, id)
		}
	}
	var known check.Baseline
	if *baseline != "" {
		f, err := os.Open(*baseline)
		if err != nil {
			fmt.Fprintf(stderr, "acpcheck: %v\n", err)
			return 2
		}
		known, err = check.ParseBaseline(f, reg)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "acpcheck: %s: %v\n", *baseline, err)
			return 2
		}
	}
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "acpcheck")
	}
	if *transcripts != "" {
		if err := os.MkdirAll(*transcripts, 0o755); err != nil {
			fmt.Fprintf(stderr, "acpcheck: --transcripts: %v\n", err)
			return 2
		}
	}
	cfg := check.Config{
		Target:          check.Target{Argv: argv, URL: *url, Dir: dir},
		Timeout:         *timeout,
		ExitBound:       *exitBound,
		Only:            ids,
		Logger:          logger,
		KeepTranscripts: *transcripts != "",
	}
	var bar *progressLine
	if live {
		bar = startProgress(stderr)
		cfg.Progress = bar.set
	}
	rep, err := check.Grade(ctx, reg, cfg)
	bar.stop()
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return 2
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(stderr, "acpcheck: interrupted")
		return 2
	}
	known.Apply(rep.Results)
	if *transcripts != "" {
		if err := writeTranscripts(*transcripts, rep.Results); err != nil {
			fmt.Fprintf(stderr, "acpcheck: --transcripts: %v\n", err)
			return 2
		}
		// The report keeps its usual shape: transcripts of what did not pass.
		for i, r := range rep.Results {
			if r.Status == check.StatusPass || r.Status == check.StatusSkip {
				rep.Results[i].Transcript = nil
			}
		}
	}
	rep = check.NewReport(rep.Command, rep.Agent, rep.Results)
	if *asJSON {
		err = check.WriteJSON(stdout, rep)
		// The verdict, naming the agent, for the person who ran it.
		fmt.Fprintf(stderr, "acpcheck: %s\n", check.SummaryLine(rep.Agent, rep.Results))
	} else {
		err = check.WriteTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return 2
	}
	if check.Failed(rep.Results) {
		return 1
	}
	return 0
}
