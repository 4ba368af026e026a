// Command modproxy serves modules of this repository as tagged releases from
// a local directory laid out as a Go module proxy, so `make release-check`
// can `go install` and `go get` them with GOPROXY=file://DIR and no network.
//
//	modproxy -out DIR -version vX.Y.Z MODDIR...
//
// Each MODDIR becomes module@version in DIR: the .info, .mod and .zip files
// and the version list the go command reads. The zip holds the module's
// files as git sees them (tracked, and untracked but not ignored, from the
// work tree), minus nested modules, exactly as a tag would carry them.
//
// A release of a later module in the list is cut after the earlier ones
// exist, so its go.sum gains their hashes when it requires them at version:
// the step `go get acpkit.dev@vX.Y.Z` performs before `adapter/vX.Y.Z` is
// tagged (see docs/RELEASING.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"acpkit.dev/tools/release/modzip"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("modproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the proxy `DIR` to write (required)")
	version := fs.String("version", "", "the release `VERSION`, e.g. v0.1.0 (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *version == "" || fs.NArg() == 0 {
		return errors.New("usage: modproxy -out DIR -version vX.Y.Z MODDIR [MODDIR]")
	}
	var released []modzip.Release
	for _, dir := range fs.Args() {
		files, err := gitFiles(dir)
		if err != nil {
			return err
		}
		m, err := modzip.Read(dir, files)
		if err != nil {
			return err
		}
		m.AddSums(*version, released)
		r, err := m.WriteProxy(*out, *version)
		if err != nil {
			return err
		}
		released = append(released, r)
		fmt.Fprintf(stderr, "modproxy: %s@%s (%d files)\n", r.Path, r.Version, len(m.Files))
	}
	return nil
}

// gitFiles lists the files of dir a commit would carry: tracked files and
// untracked ones that are not ignored, relative to dir, slash-separated.
func gitFiles(dir string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", dir, err, strings.TrimSpace(errb.String()))
	}
	var files []string
	for _, f := range strings.Split(string(b), "\x00") {
		if f == "" {
			continue
		}
		// A tracked file deleted from the work tree is not in the release.
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	return files, nil
}
