package realruntime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// tapVar names the file TapMain copies the runtime's stdin to.
const tapVar = "ACPKIT_REALRT_TAP"

// TapMain makes a test binary double as a wire tap: when it was started
// through Runtime.Tapped it runs the runtime named by its arguments, copies
// what the runtime reads to the tap file, and exits with the runtime's
// status. Otherwise it returns at once. Call it first in TestMain.
func TapMain() {
	file := os.Getenv(tapVar)
	if file == "" {
		return
	}
	os.Exit(tap(file, os.Args[1:]))
}

func tap(file string, argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "realruntime tap: no command")
		return 2
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realruntime tap:", err)
		return 2
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, tapVar+"=") })
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "realruntime tap:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "realruntime tap:", err)
		return 2
	}
	go func() {
		_, _ = io.Copy(io.MultiWriter(in, f), os.Stdin)
		_ = in.Close()
	}()
	err = cmd.Wait()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return exit.ExitCode()
	}
	if err != nil {
		return 2
	}
	return 0
}
