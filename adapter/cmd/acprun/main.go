// Command acprun drives one session of an Agent Client Protocol runtime
// through Sortie's adapter and shows what the orchestrator would see: a live
// view on a terminal, plain lines otherwise, or one JSON object per line
// with --json.
//
//	acprun [flags] [prompt ...] [-]
//	acprun refagent [refagent flags]
//	acprun replay FILE
//	acprun show FILE
//
// Without --command it runs the reference agent, which acprun carries
// itself (`acprun refagent` speaks ACP on stdio), so nothing external is
// needed; `acprun --demo` shows a complete session. Point it at a runtime
// with --command, e.g. --command "gemini --acp". --record FILE writes the
// session's transcript; `acprun replay FILE` is then a runtime that plays
// the recorded runtime's side back, and `acprun show FILE` prints it as a
// timeline (package internal/transcript documents the format).
//
// A prompt "-" is standard input: after a prompt it joins that prompt's
// turn (`git diff | acprun "Review this diff:" -` is one turn), alone it
// is a turn of its own. --permissions chooses what happens to the
// runtime's permission requests (refuse, the unattended default; ask, on
// the controlling terminal; approve-reads; approve-all) and --auth-method
// authenticates before the session starts; neither is ever on by default.
//
// Exit status: 0 every turn completed, 2 usage error, 3 start failed (or a
// --resume-policy required resume did not continue the session), 4 a
// turn failed, 5 cancelled, 6 input required (the run needs a person). The
// first Ctrl-C cancels the turn through the protocol (session/cancel); a
// second one, SIGTERM or SIGHUP stops the runtime at once. The session is
// always stopped, and the runtime's process group never outlives acprun.
//
// Run `acprun --help` for the flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"acpkit.dev/adapter/cmd/acprun/internal/cli"
	"acpkit.dev/adapter/cmd/acprun/internal/transcript"
	referenceagent "acpkit.dev/conformance/refagent"
	"acpkit.dev/internal/cmdline"
)

// spinnerInterval paces the live view's progress indicator.
const spinnerInterval = 100 * time.Millisecond

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case cli.RefagentSubcommand:
			os.Exit(referenceagent.Main(os.Args[2:]))
		case cli.ReplaySubcommand:
			os.Exit(replay(os.Args[2:]))
		case cli.ShowSubcommand:
			os.Exit(show(os.Args[2:]))
		}
	}
	os.Exit(run())
}

// fileArg parses a subcommand's one FILE argument: the file's transcript,
// or the exit status to end with (0 for --help, 2 for a usage error).
func fileArg(sub, synopsis string, args []string) (*transcript.Transcript, string, int) {
	fs := cmdline.New("acprun "+sub, synopsis)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		fs.Help(os.Stdout)
		return nil, "", 0
	case err == nil && fs.NArg() != 1:
		err = cmdline.Usagef("one FILE, a transcript acprun --record wrote")
	}
	if err != nil {
		return nil, "", fs.Fail(os.Stderr, err)
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun %s: %v\n", sub, err)
		return nil, "", cmdline.ExitUsage
	}
	defer f.Close()
	t, err := transcript.Read(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun %s: %s: %v\n", sub, path, err)
		return nil, "", cmdline.ExitUsage
	}
	return t, path, -1
}

// replay is `acprun replay FILE`: the recorded runtime on stdio. A file
// acprun cannot read, or a terminal on stdin, exits 2; a client that
// diverges from the recording 1.
func replay(args []string) int {
	t, path, code := fileArg(cli.ReplaySubcommand, replaySynopsis, args)
	if t == nil {
		return code
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		// A person, not a client, is at the other end: nothing will ever
		// send what the recording waits for.
		fmt.Fprintf(os.Stderr, "acprun replay: standard input is a terminal; a replay is a runtime for a client to drive: acprun --command \"acprun replay %s\" PROMPT\n", path)
		return cmdline.ExitUsage
	}
	code, err := transcript.Replay(t, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun replay: %s: %v\n", path, err)
	}
	return code
}

// show is `acprun show FILE`: the recording as a readable timeline.
func show(args []string) int {
	t, _, code := fileArg(cli.ShowSubcommand, showSynopsis, args)
	if t == nil {
		return code
	}
	if err := transcript.Show(os.Stdout, t); err != nil {
		fmt.Fprintf(os.Stderr, "acprun show: %v\n", err)
		return 1
	}
	return 0
}

const (
	replaySynopsis = `usage: acprun replay FILE

Plays the runtime's side of a transcript acprun --record wrote on standard
input and output, for a client to drive, e.g.
acprun --command "acprun replay FILE" PROMPT. The client must send what the
recorded one did, prompts included; a difference ends the replay (exit 1)
naming both.`
	showSynopsis = `usage: acprun show FILE

Prints a transcript acprun --record wrote as a timeline: who sent what,
when, and how long each turn took.`
)

func run() int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	// A reader that goes away (acprun --json | head -1) must not kill acprun
	// before it stops the runtime: writes fail instead, and the run goes on
	// to its teardown.
	signal.Ignore(syscall.SIGPIPE)

	stdout := int(os.Stdout.Fd())
	live := term.IsTerminal(stdout)
	env := cli.Env{
		Args:   os.Args[1:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Live:   live,
		// Escape codes (colour, the progress indicator) only where a
		// terminal takes them and the person wants them.
		Color: live && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
		Width: func() int {
			w, _, err := term.GetSize(stdout)
			if err != nil {
				return 0
			}
			return w
		},
		OpenTTY:        cli.OpenControllingTerminal,
		Signals:        signals,
		Getwd:          os.Getwd,
		Now:            time.Now,
		NewRuntime:     newRuntime,
		ReferenceAgent: selfPath,
	}
	if env.Color {
		ticker := time.NewTicker(spinnerInterval)
		defer ticker.Stop()
		env.Tick = ticker.C
	}
	return cli.Main(env)
}

// selfPath is acprun's own executable, which runs the reference agent as
// its refagent subcommand.
func selfPath(context.Context) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find acprun's own executable: %w", err)
	}
	return exe, nil
}
