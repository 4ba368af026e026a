//go:build unix

package launch

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv selects a behaviour when the test binary runs as a child: the
// tests launch os.Args[0] itself as the "runtime".
const helperEnv = "LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	becomeSubreaper()
	goleak.VerifyTestMain(m)
}

// stuck models a runtime that never finishes on its own. It is the helper
// program's behaviour, not a wait in a test.
func stuck() { time.Sleep(time.Hour) }

// runHelper is the child side. Modes print what the test checks on stdout.
func runHelper(mode string) int {
	switch mode {
	case "env": // SP-1, LT-5: environment and working directory
		wd, _ := os.Getwd()
		fmt.Printf("FOO=%s\nBAR=%s\nWD=%s\n", os.Getenv("FOO"), os.Getenv("BAR"), wd)
		return 0
	case "ids": // SP-2, SP-9: pid and process group
		fmt.Printf("%d %d\n", os.Getpid(), syscall.Getpgrp())
		return 0
	case "exit7":
		fmt.Fprintln(os.Stderr, "failing on purpose")
		return 7
	case "echo": // TD-4: exits when stdin closes, status 3
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("echo " + sc.Text())
		}
		return 3
	case "trapterm": // ignores SIGTERM, answers pings until killed
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("pong")
		}
		stuck()
		return 0
	case "block":
		fmt.Println("ready")
		stuck()
		return 0
	case "hold": // a silent descendant that keeps inherited stdout open
		stuck()
		return 0
	case "tree-end", "tree-block", "tree-trapterm": // TD-15's runtime: see spawnTree
		if mode == "tree-trapterm" {
			signal.Ignore(syscall.SIGTERM)
		}
		if err := spawnTree(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("ready")
		if mode == "tree-end" {
			// Ends on its own, but only once stdin closes, so the test
			// can name it while it certainly runs.
			_, _ = io.Copy(io.Discard, os.Stdin)
			return 0
		}
		stuck()
		return 0
	case "session": // a tool command in a session of its own, with a child
		child, err := spawnHelper("hold", &syscall.SysProcAttr{}, os.Environ())
		if err != nil {
			return 1
		}
		fmt.Printf("pid %d\npid %d\n", os.Getpid(), child)
		stuck()
		return 0
	case "daemonize": // the first half of a double fork: start the daemon, exit
		daemon, err := spawnHelper("hold", &syscall.SysProcAttr{Setsid: true}, os.Environ())
		if err != nil {
			return 1
		}
		fmt.Printf("pid %d\n", daemon)
		return 0
	case "spawn-ingroup", "spawn-detached": // leave a descendant holding stdout
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=hold")
		cmd.Stdout = os.Stdout
		if mode == "spawn-detached" {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d\n", cmd.Process.Pid)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// treeScrubEnv, set in a tree runtime's environment, adds a descendant
// with an empty environment: no containment token, found only through
// its parent.
const treeScrubEnv = "LAUNCH_TEST_TREE_SCRUB"

// spawnTree leaves what real runtimes leave behind, each line "pid N" on
// the shared stdout: a tool command in a session of its own (setsid) with
// a child in that session; a daemon that double-forked away (its parent
// exits at once and the daemon is orphaned); with treeScrubEnv, a child in
// a session of its own whose environment is empty.
func spawnTree() error {
	session := exec.Command(os.Args[0])
	session.Env = append(os.Environ(), helperEnv+"=session")
	session.Stdout = os.Stdout
	session.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := session.Start(); err != nil {
		return err
	}
	daemonize := exec.Command(os.Args[0])
	daemonize.Env = append(os.Environ(), helperEnv+"=daemonize")
	daemonize.Stdout = os.Stdout
	if err := daemonize.Run(); err != nil {
		return err
	}
	if os.Getenv(treeScrubEnv) != "" {
		pid, err := spawnHelper("hold", &syscall.SysProcAttr{Setsid: true}, []string{helperEnv + "=hold"})
		if err != nil {
			return err
		}
		fmt.Printf("pid %d\n", pid)
	}
	return nil
}

// spawnHelper starts this binary in mode with attr and env (plus the
// mode), its stdio /dev/null, and does not wait for it.
func spawnHelper(mode string, attr *syscall.SysProcAttr, env []string) (int, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(env, helperEnv+"="+mode)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}
