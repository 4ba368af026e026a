package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"acpkit.dev/conformance/check"
	"acpkit.dev/internal/cmdline"
)

// clientSynopsis heads `acpcheck client --help`; its first line is the
// usage a wrong command line repeats.
const clientSynopsis = `usage: acpcheck client [flags] -- CLIENT-COMMAND [ARGS...]

Plays a scripted agent and grades the ACP client the command starts, once
per check. Every {agent} in ARGS is replaced by the command line that starts
acpcheck's scenario agent. Exit status as for agent grading: 0 OK, 1 FAILED,
2 bad arguments or a client that cannot be launched, 3 INCOMPLETE.`

// runClient is `acpcheck client`: it grades the client the arguments after
// "--" start, playing a scripted agent it launches through {agent}.
func runClient(ctx context.Context, args []string, stdout, stderr io.Writer, live bool) int {
	fs := cmdline.New("acpcheck client", clientSynopsis)
	// The client's own flags follow the command: none of them is acpcheck's.
	fs.SetInterspersed(false)
	cwd := fs.String("cwd", "", "the client's working directory (default: a fresh temporary directory per check)")
	asJSON := fs.Bool("json", false, "print one JSON report instead of a table")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on each wait for the client")
	exitBound := fs.Duration("exit-bound", 5*time.Second, "bound on each wait for a process to exit")
	lineBound := fs.Int("line-bound", check.DefaultClientLineBound, "the client's own bound on an inbound line, in `BYTES`: wire.oversize-line sends one byte more")
	baseline := fs.String("baseline", "", "file of known failures for this client ("+baselineForm+")")
	only := fs.String("only", "", "comma-separated check IDs to run (default: all)")
	verbose := fs.BoolP("verbose", "v", false, "log each check as it finishes to stderr")
	list := fs.Bool("list", false, "list the client checks (ID, tier, requirement, what it pins) and exit")
	transcripts := fs.String("transcripts", "", "write every check's wire transcript to `DIR`/<check ID>.jsonl (acprun's transcript format: acprun replay plays the scenario agent back to the client)")
	html := fs.String("html", "", "also write the report as one self-contained HTML page to `FILE`")
	var env agentEnv
	fs.Var(&env, "client-env", "set `NAME=VALUE` in the client's environment (repeatable); NAME alone passes acpcheck's own value; values are masked in transcripts and reports")
	switch err := fs.Parse(args); {
	case errors.Is(err, cmdline.ErrHelp):
		fs.Help(stdout)
		return 0
	case err != nil:
		return fs.Fail(stderr, err)
	}
	reg := check.ClientStandard()
	if *list {
		listChecks(stdout, reg)
		return 0
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return fs.Fail(stderr, cmdline.Usagef("no client command after --"))
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
