package refagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"acpkit.dev/internal/cmdline"
)

// Main runs the reference agent as a process over os.Stdin and os.Stdout
// with args as its flags, and returns the exit status.
func Main(args []string) int {
	opts, err := ParseFlags(args, os.Stderr)
	switch {
	case errors.Is(err, cmdline.ErrHelp):
		Help(os.Stdout)
		return 0
	case err != nil:
		if !errors.Is(err, ErrUsage) {
			fmt.Fprintln(os.Stderr, err)
		}
		return cmdline.ExitUsage
	case opts.version:
		fmt.Println(cmdline.Version("refagent"))
		return 0
	}
	if opts.beDescendant > 0 {
		// The stdout-holding descendant: it only has to exist.
		time.Sleep(opts.beDescendant)
		return 0
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "refagent", "pid", os.Getpid())
	for _, name := range opts.LogEnv {
		log.Info("environment", "name", name, "value", os.Getenv(name))
	}
	if opts.Listen != "" {
		// Served over the network until SIGINT or SIGTERM.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := Listen(ctx, opts, opts.Listen, opts.Transport, os.Stdout, log); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if opts.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
		log.Info("ignoring SIGTERM")
	}
	if opts.Descendant != "" {
		if err := spawnDescendant(opts, log); err != nil {
			log.Error("starting the descendant", "error", err)
			return 1
		}
	}
	ag, _ := start(context.Background(), opts, os.Stdin, os.Stdout, log, os.Exit)
	<-ag.t.conn.Done()
	// Stdin ended: end the turns in flight, give them a moment to answer,
	// then go — without Close, which would drop what is still queued.
	ag.drain(drainBound)
	if opts.IgnoreStdinClose {
		log.Info("stdin closed; staying alive as asked (--ignore-stdin-close)")
		waitForInterrupt()
	}
	log.Info("stdin closed; exiting")
	return 0
}

// waitForInterrupt blocks until SIGINT; SIGTERM keeps its default action
// unless --ignore-sigterm, and SIGKILL always works.
func waitForInterrupt() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
}

// spawnDescendant starts a copy of this program that only sleeps, holding
// the agent's stdout open after the agent exits: in the agent's process
// group ("group") or in its own ("detached").
func spawnDescendant(opts Options, log *slog.Logger) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The arguments before the agent's own flags (acprun's "refagent"
	// subcommand, when acprun runs the agent) select the agent again.
	var prefix []string
	if n := len(os.Args) - len(opts.args); n >= 1 {
		prefix = os.Args[1:n]
	}
	cmd := exec.Command(self, append(slices.Clone(prefix), "--be-descendant", opts.DescendantFor.String())...)
	cmd.Stdout = os.Stdout // the point: the descendant shares the agent's stdout
	cmd.Stderr = os.Stderr
	if opts.Descendant == "detached" {
		detach(cmd)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	log.Info("descendant holding stdout", "descendant_pid", pid, "mode", opts.Descendant, "for", opts.DescendantFor)
	if opts.DescendantPIDFile != "" {
		if err := os.WriteFile(opts.DescendantPIDFile, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
			return err
		}
	}
	go func() { _ = cmd.Wait() }() // reap it if it ends first
	return nil
}
