// Package releasecheck tests scripts/release-check.sh itself, the way
// `make release-check` runs it, in the environments that have broken it.
package releasecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseCheckIgnoresAGitAbove: a .git directory above TMPDIR that git
// cannot read (here an empty one; on a CI host, one owned by another user)
// made the scratch build fail with "error obtaining VCS status", because
// the script's GOFLAGS replaced the environment's -buildvcs=false (issue
// #30).
func TestReleaseCheckIgnoresAGitAbove(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release check builds every command from a module proxy")
	}
	above := t.TempDir()
	if err := os.Mkdir(filepath.Join(above, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(above, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../../scripts/release-check.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("release-check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "installs from a file:// proxy with no network") {
		t.Fatalf("release-check did not finish:\n%s", out)
	}
}
