package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"acpkit.dev/conformance/check"
)

// clientUsage is the first line of `acpcheck client -h`.
const clientUsage = "usage: acpcheck client [flags] -- CLIENT-COMMAND [ARGS...]   ({agent} in ARGS is the scenario agent's command line)"

// runClient is `acpcheck client`: it grades the client the arguments after
// "--" start, playing a scripted agent it launches through {agent}.
func runClient(ctx context.Context, args []string, stdout, stderr io.Writer, live bool) int {
	fs := flag.NewFlagSet("acpcheck client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, clientUsage)
		fs.PrintDefaults()
	}
	cwd := fs.String("cwd", "", "the client's working directory (default: a fresh temporary directory per check)")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each wait for the client")
	exitBound := fs.Duration("exit-bound", 5*time.Second, "bound on each wait for a process to exit")
	lineBound := fs.Int("line-bound", check.DefaultClientLineBound, "the client's own bound on an inbound line, in `BYTES`: wire.oversize-line sends one byte more")
	baseline := fs.String("baseline", "", "file of known failures for this client (\"CHECK-ID note\" per line)")
	only := fs.String("only", "", "comma-separated check IDs to run (default: all)")
	verbose := fs.Bool("v", false, "log each check as it finishes to stderr")
	list := fs.Bool("list", false, "list the client checks (ID, tier, requirement, what it pins) and exit")
	transcripts := fs.String("transcripts", "", "write every check's wire transcript to `DIR`/<check ID>.jsonl (acprun's transcript format: acprun replay plays the scenario agent back to the client)")
	html := fs.String("html", "", "also write the report as one self-contained HTML page to `FILE`")
	var env agentEnv
	fs.Var(&env, "client-env", "set `NAME=VALUE` in the client's environment (repeatable); NAME alone passes acpcheck's own value; values are masked in transcripts and reports")
	if err := fs.Parse(args); err != nil {
		return check.ExitUsage
	}
	reg := check.ClientStandard()
	if *list {
		listChecks(stdout, reg)
		return 0
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "acpcheck client: no client command after --\n"+clientUsage)
		return check.ExitUsage
	}
	ids, err := parseOnly(reg, *only)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck client: %v\n", err)
		return check.ExitUsage
	}
	known, err := readBaseline(reg, *baseline)
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck client: %v\n", err)
		return check.ExitUsage
	}
	if err := prepareOutputs(*transcripts); err != nil {
		fmt.Fprintf(stderr, "acpcheck client: %v\n", err)
		return check.ExitUsage
	}
	program, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck client: cannot find acpcheck's own executable for the scenario agent: %v\n", err)
		return check.ExitUsage
	}
	cfg := check.ClientConfig{
		Argv:            argv,
		AgentProgram:    program,
		Timeout:         *timeout,
		ExitBound:       *exitBound,
		LineBound:       *lineBound,
		Only:            ids,
		KeepTranscripts: *transcripts != "",
	}
	if *cwd != "" {
		if cfg.Dir, err = filepath.Abs(*cwd); err != nil {
			fmt.Fprintf(stderr, "acpcheck client: --cwd: %v\n", err)
			return check.ExitUsage
		}
	}
	if len(env) > 0 {
		if cfg.Env, cfg.Secrets, err = env.apply(os.Environ(), os.LookupEnv); err != nil {
			fmt.Fprintf(stderr, "acpcheck client: --client-env: %v\n", err)
			return check.ExitUsage
		}
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "acpcheck")
	}
	var bar *progressLine
	if live {
		bar = startProgress(stderr)
		cfg.Progress = bar.set
	}
	rep, err := check.GradeClient(ctx, reg, cfg)
	bar.stop()
	return emit(ctx, rep, err, emitOptions{transcripts: *transcripts, html: *html, json: *asJSON, baseline: known, env: env.masked()}, stdout, stderr)
}
