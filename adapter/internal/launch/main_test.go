//go:build unix

package launch

import (
	"bufio"
	"fmt"
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
