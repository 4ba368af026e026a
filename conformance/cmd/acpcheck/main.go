// Command acpcheck grades how far an ACP agent conforms to the protocol.
//
//	acpcheck --command "gemini --acp" [--cwd DIR] [--json] [--timeout D]
//	         [--exit-bound D] [--baseline FILE] [--only ID,ID] [-v]
//	acpcheck --list
//
// It launches the command once per check (split on whitespace; no shell),
// runs the registry of acpkit.dev/conformance/check, and prints a table of
// ID, tier, result and reason — or, with --json, one JSON report — followed
// by the wire transcript of every check that did not pass.
//
// Exit status: 0 when every mandatory and advertised-capability check
// passed (or is a known failure in --baseline); 1 when one failed, or when
// a baseline entry's check now passes (the baseline is stale); 2 when the
// arguments are wrong or the agent cannot be launched.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"acpkit.dev/conformance/check"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acpcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	command := fs.String("command", "", "the agent command line, e.g. \"gemini --acp\" (required)")
	cwd := fs.String("cwd", ".", "working directory for the agent and its sessions")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each wait for a response")
	exitBound := fs.Duration("exit-bound", 5*time.Second, "bound on each wait for the process to exit")
	baseline := fs.String("baseline", "", "file of known failures for this peer (\"CHECK-ID note\" per line)")
	only := fs.String("only", "", "comma-separated check IDs to run (default: all)")
	verbose := fs.Bool("v", false, "log each check as it finishes to stderr")
	list := fs.Bool("list", false, "list the checks (ID, tier, requirement) and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, c := range check.Standard().Checks() {
			fmt.Fprintf(stdout, "%-32s %-10s %s\n", c.ID, c.Tier, c.Title)
		}
		return 0
	}
	argv := strings.Fields(*command)
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "acpcheck: --command is required")
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
	results, err := check.Run(ctx, reg, check.Config{
		Target:    check.Target{Argv: argv, Dir: dir},
		Timeout:   *timeout,
		ExitBound: *exitBound,
		Only:      ids,
		Logger:    logger,
	})
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return 2
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(stderr, "acpcheck: interrupted")
		return 2
	}
	known.Apply(results)
	if *asJSON {
		err = check.WriteJSON(stdout, argv, results)
	} else {
		err = check.WriteTable(stdout, results)
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck: %v\n", err)
		return 2
	}
	if check.Failed(results) {
		return 1
	}
	return 0
}
