//go:build windows

package launch

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/windows"
)

// helperEnv selects a behaviour when the test binary runs as a child: the
// tests launch os.Args[0] itself as the "runtime". markerEnv names a file
// the child creates as its very first act, so a test can tell whether it
// ran any code.
const (
	helperEnv = "LAUNCH_TEST_HELPER"
	markerEnv = "LAUNCH_TEST_MARKER"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(markerEnv); path != "" {
		if err := os.WriteFile(path, []byte("ran"), 0o644); err != nil {
			os.Exit(9)
		}
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
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
	case "pid": // SP-9
		fmt.Println(os.Getpid())
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
	case "block":
		fmt.Println("ready")
		stuck()
		return 0
	case "hold": // a silent descendant that keeps inherited stdio open
		stuck()
		return 0
	case "spawn-block", "spawn-exit", "spawn-breakaway":
		// Leave a descendant holding stdout and stderr; print its pid.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=hold", markerEnv+"=")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if mode == "spawn-breakaway" {
			// Asking to leave a job that allows no breakaway is refused;
			// a new process group is no way out either.
			cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB}
			if err := cmd.Start(); err == nil {
				fmt.Println("escaped")
				return 1
			}
			cmd = exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperEnv+"=hold", markerEnv+"=")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(cmd.Process.Pid)
		if mode == "spawn-block" {
			stuck()
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}
