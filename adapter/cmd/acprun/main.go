// Command acprun drives one session of an Agent Client Protocol runtime
// through Sortie's adapter and shows what the orchestrator would see: a live
// view on a terminal, plain lines otherwise, or one JSON object per line
// with --json.
//
//	acprun [flags] [prompt ...]
//	acprun refagent [refagent flags]
//	acprun replay FILE
//
// Without --command it runs the reference agent, which acprun carries
// itself (`acprun refagent` speaks ACP on stdio), so nothing external is
// needed; `acprun --demo` shows a complete session. Point it at a runtime
// with --command, e.g. --command "gemini --acp". --record FILE writes the
// session's transcript, and `acprun replay FILE` is then a runtime that
// plays the recorded runtime's side back (package internal/transcript
// documents the format).
//
// Exit status: 0 every turn completed, 2 usage error, 3 start failed (or a
// --resume-policy required resume did not continue the session), 4 a
// turn failed, 5 cancelled, 6 input required (the run needs a person). The
// first Ctrl-C cancels the turn through the protocol (session/cancel); a
// second one, SIGTERM or SIGHUP stops the runtime at once. The session is
// always stopped, and the runtime's process group never outlives acprun.
//
// Run `acprun -h` for the flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"acpkit.dev/adapter/cmd/acprun/internal/cli"
	"acpkit.dev/adapter/cmd/acprun/internal/transcript"
	referenceagent "acpkit.dev/conformance/refagent"
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
		}
	}
	os.Exit(run())
}

// replay is `acprun replay FILE`: the recorded runtime on stdio. A file
// acprun cannot read exits 2; a client that diverges from the recording 1.
func replay(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: acprun replay FILE")
		return 2
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun replay: %v\n", err)
		return 2
	}
	t, err := transcript.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun replay: %s: %v\n", args[0], err)
		return 2
	}
	code, err := transcript.Replay(t, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun replay: %s: %v\n", args[0], err)
	}
	return code
}

func run() int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	// A reader that goes away (acprun --json | head -1) must not kill acprun
	// before it stops the runtime: writes fail instead, and the run goes on
	// to its teardown.
	signal.Ignore(syscall.SIGPIPE)

	env := cli.Env{
		Args:           os.Args[1:],
		Stdin:          os.Stdin,
		Stdout:         os.Stdout,
		Stderr:         os.Stderr,
		Live:           cli.IsTerminal(os.Stdout.Fd()),
		Color:          os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
		Signals:        signals,
		Getwd:          os.Getwd,
		Now:            time.Now,
		NewRuntime:     newRuntime,
		ReferenceAgent: selfPath,
	}
	if env.Live {
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
