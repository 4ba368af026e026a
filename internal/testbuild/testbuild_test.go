package testbuild_test

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"acpkit.dev/internal/testbuild"
)

// TestCommand_BuildsAsTheTestWasBuilt builds a command with Command and
// reads its build settings: -race exactly when this test binary has it.
func TestCommand_BuildsAsTheTestWasBuilt(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	testRace := slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool { return s.Key == "-race" && s.Value == "true" })
	out := filepath.Join(t.TempDir(), "cmd")
	if msg, err := testbuild.Command(t.Context(), out, "acpkit.dev/internal/testbuild/testdata/hello").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	settings, err := exec.Command("go", "version", "-m", out).Output()
	if err != nil {
		t.Fatal(err)
	}
	built, err := exec.Command(out).Output()
	if err != nil || string(built) != "hello\n" {
		t.Fatalf("the command built: %q, %v", built, err)
	}
	if got := slices.Contains(strings.Fields(string(settings)), "-race=true"); got != testRace {
		t.Errorf("command built with -race: %v; the test binary: %v\n%s", got, testRace, settings)
	}
}
