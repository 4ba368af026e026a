// Package npmtest finds, for a test, the Node.js packages that
// scripts/install-test-deps.sh installs from the lock files committed under
// conformance/ (the TypeScript SDK, the pinned real runtimes).
//
// A test that runs one calls Node or Bin first. Both skip under -short,
// which `make check` sets to keep the edit loop free of npm and of
// multi-second runtime starts; `make test` never sets it, and there a
// package that is missing fails the test: it is a broken set-up that
// `make deps` repairs, not a reason to pass.
package npmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Node returns the node executable on PATH, or skips t under -short or
// where Node.js is not installed at all.
func Node(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("npmtest: -short (make check) leaves out the tests that run Node.js packages; make test runs them")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("npmtest: node is not installed; the tests of Node.js packages need it")
	}
	return node
}

// Bin returns the executable name that the npm package installed in
// conformance/runtimes/dir provides, after Node. It fails t when the
// package is not installed.
func Bin(t testing.TB, dir, name string) string {
	t.Helper()
	Node(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "conformance", "runtimes", dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("npmtest: %s is not installed (run `make deps`: scripts/install-test-deps.sh runs npm ci in conformance/runtimes/%s): %v", name, dir, err)
	}
	return bin
}

// RepoRoot is the directory holding go.work above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("npmtest: no go.work above the working directory")
		}
		dir = up
	}
}
