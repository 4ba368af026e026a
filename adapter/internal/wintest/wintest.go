// Package wintest holds what the adapter's tests need to run as Windows
// binaries under Wine (scripts/wine-test.sh).
package wintest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TempDir is t.TempDir for Wine: Wine 8 fails the os.RemoveAll that
// t.TempDir's cleanup runs ("unlinkat …: Invalid function"), while plain
// os.Remove works, so this cleanup removes depth first, one entry at a
// time. Elsewhere it behaves like t.TempDir.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "acpkit-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := RemoveDepthFirst(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	return dir
}

// RemoveDepthFirst removes root and everything under it, the deepest
// entries first.
func RemoveDepthFirst(root string) error {
	var paths []string
	err := filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		return err
	}
	// WalkDir visits a directory before its entries.
	for _, p := range slices.Backward(paths) {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}
