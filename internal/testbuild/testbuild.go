// Package testbuild builds the programs a test runs (a reference agent, a
// Go agent for an interop peer) as the test binary itself was built: under
// `go test -race` with -race, so that they reuse the packages the test's
// own build compiled instead of compiling every one of them again, without
// the race detector.
package testbuild

import (
	"context"
	"os/exec"
)

// Flags are the go build flags that make a build match the running
// binary's: -race when it was built with the race detector.
func Flags() []string {
	if raceEnabled {
		return []string{"-race"}
	}
	return nil
}

// Command is `go build` of pkg into out, with Flags. go test puts the
// toolchain that built the test first on PATH, so it is the same go.
func Command(ctx context.Context, out, pkg string) *exec.Cmd {
	args := append(append([]string{"build"}, Flags()...), "-o", out, pkg)
	return exec.CommandContext(ctx, "go", args...)
}
