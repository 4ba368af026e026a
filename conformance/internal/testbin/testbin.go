// Package testbin builds the conformance binaries once per test binary, so
// tests drive real processes without paying a build per test.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The packages of the conformance binaries tests drive.
const (
	// RefAgent is the reference agent's package path.
	RefAgent = "acpkit.dev/conformance/cmd/refagent"
	// RefClient is the reference client's package path.
	RefClient = "acpkit.dev/conformance/cmd/refclient"
	// ACPCheck is acpcheck's package path (the scenario agent of client
	// grading is acpcheck itself).
	ACPCheck = "acpkit.dev/conformance/cmd/acpcheck"
)

// goTool finds the go command that is running the tests: go test puts its
// own GOROOT/bin first on the test binary's PATH.
func goTool() (string, error) {
	return exec.LookPath("go")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Build compiles pkg into dir and returns the binary's path.
func Build(dir, pkg string) (string, error) {
	gocmd, err := goTool()
	if err != nil {
		return "", fmt.Errorf("testbin: no go command: %w", err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	cmd := exec.Command(gocmd, "build", "-o", out, pkg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testbin: go build %s: %w: %s", pkg, err, stderr.String())
	}
	if !fileExists(out) {
		return "", errors.New("testbin: go build produced no binary")
	}
	return out, nil
}

// Main is a TestMain for packages that drive the reference agent: it builds
// the agent once into a temporary directory, stores its path in *bin, runs
// the tests under goleak, and removes the directory. It does not return.
func Main(m *testing.M, bin *string) { MainBuilding(m, map[string]*string{RefAgent: bin}) }

// MainBuilding is Main for several binaries: each package of bins is
// built once and its path stored where bins points.
func MainBuilding(m *testing.M, bins map[string]*string) {
	dir, err := os.MkdirTemp("", "refagent-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for pkg, bin := range bins {
		if *bin, err = Build(dir, pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
