package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// refagentPackage is the reference agent's main package.
const refagentPackage = "acpkit.dev/conformance/cmd/refagent"

// refagentName is the reference agent's binary name on this platform.
var refagentName = "refagent" + exeSuffix()

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// AgentLocator finds or builds the reference agent, the runtime acprun
// drives when --command is absent.
type AgentLocator struct {
	// Executable is acprun's own binary; a reference agent beside it wins.
	Executable string
	// SourceRoots are candidate repository roots to build from, tried in
	// order; the first holding the reference agent's sources is used.
	SourceRoots []string
	// CacheDir receives the built binary.
	CacheDir string
	// Go is the go command.
	Go string
}

// DefaultAgentLocator looks beside the running executable, then builds from
// the repository this binary was compiled from, or the one enclosing the
// current directory, into the user's cache directory.
func DefaultAgentLocator() AgentLocator {
	l := AgentLocator{Go: "go"}
	if exe, err := os.Executable(); err == nil {
		l.Executable = exe
	}
	// The compiled-in path of this file names the repository it was built
	// from (absent under -trimpath, when it is not absolute).
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		l.SourceRoots = append(l.SourceRoots, filepath.Join(filepath.Dir(file), "..", "..", "..", "..", ".."))
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			l.SourceRoots = append(l.SourceRoots, dir)
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if cache, err := os.UserCacheDir(); err == nil {
		l.CacheDir = filepath.Join(cache, "acpkit", "acprun")
	} else {
		l.CacheDir = filepath.Join(os.TempDir(), "acpkit-acprun")
	}
	return l
}

// Locate returns the reference agent's path, building it when no binary
// sits beside acprun.
func (l AgentLocator) Locate(ctx context.Context) (string, error) {
	if l.Executable != "" {
		beside := filepath.Join(filepath.Dir(l.Executable), refagentName)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, nil
		}
	}
	root, ok := l.sourceRoot()
	if !ok {
		return "", errors.New("no reference agent beside acprun and no acpkit source tree to build one from; pass --command")
	}
	return l.build(ctx, root)
}

// sourceRoot returns the first candidate holding the reference agent.
func (l AgentLocator) sourceRoot() (string, bool) {
	for _, dir := range l.SourceRoots {
		main := filepath.Join(dir, "conformance", "cmd", "refagent")
		if fi, err := os.Stat(main); err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.Clean(dir), true
			}
		}
	}
	return "", false
}

// build runs go build into the cache directory. The go command's own cache
// keeps a rebuild of unchanged sources to a link; the binary is written
// under a private name and renamed so concurrent acpruns never run a
// half-written file.
func (l AgentLocator) build(ctx context.Context, root string) (string, error) {
	if err := os.MkdirAll(l.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("reference agent cache: %w", err)
	}
	tmp, err := os.CreateTemp(l.CacheDir, "refagent-*"+exeSuffix())
	if err != nil {
		return "", fmt.Errorf("reference agent cache: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // a no-op after the rename

	cmd := exec.CommandContext(ctx, l.Go, "build", "-o", tmpName, refagentPackage)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %w: %s", refagentPackage, root, err, strings.TrimSpace(out.String()))
	}
	dst := filepath.Join(l.CacheDir, refagentName)
	if err := os.Rename(tmpName, dst); err != nil {
		return "", fmt.Errorf("reference agent cache: %w", err)
	}
	return dst, nil
}
