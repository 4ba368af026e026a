//go:build linux

package realruntime

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// copilotCache is the COPILOT_CACHE_HOME every Copilot CLI the tests run
// shares: on its first start the CLI unpacks 235 MB there (its package,
// keyed by version), which takes seconds; a home per test would repeat it
// every time. The cache lives in the installed package's
// node_modules/.cache (git-ignored with node_modules, and gone with it
// when npm ci reinstalls another version), and is filled once, under a
// file lock, by whichever test process comes first
// (scripts/install-test-deps.sh fills it at install time already).
func copilotCache(t testing.TB, bin string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(filepath.Dir(bin)), ".cache", "copilot")
	warm := filepath.Join(dir, ".acpkit-warm")
	if _, err := os.Stat(warm); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("realruntime: copilot cache: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".acpkit-lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("realruntime: copilot cache: %v", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatalf("realruntime: copilot cache: %v", err)
	}
	defer func() { _ = unix.Flock(int(lock.Fd()), unix.LOCK_UN) }()
	if _, err := os.Stat(warm); err == nil {
		return dir // another process filled it while this one waited
	}
	// --version unpacks the package and exits.
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "COPILOT_CACHE_HOME="+dir, "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("realruntime: filling the copilot cache: %v\n%s", err, out)
	}
	if err := os.WriteFile(warm, nil, 0o644); err != nil {
		t.Fatalf("realruntime: copilot cache: %v", err)
	}
	return dir
}
