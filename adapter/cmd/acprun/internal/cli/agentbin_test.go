package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentLocatorPrefersTheBinaryBesideAcprun(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "acprun")
	require.NoError(t, os.WriteFile(filepath.Join(dir, refagentName), []byte("#!/bin/sh\n"), 0o755))
	l := AgentLocator{Executable: exe, SourceRoots: []string{t.TempDir()}, CacheDir: t.TempDir(), Go: "go-is-not-run"}
	path, err := l.Locate(context.Background())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, refagentName), path)
}

func TestAgentLocatorWithoutSourcesAsksForCommand(t *testing.T) {
	l := AgentLocator{Executable: filepath.Join(t.TempDir(), "acprun"), SourceRoots: []string{t.TempDir()}, CacheDir: t.TempDir()}
	_, err := l.Locate(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pass --command")
}

func TestAgentLocatorBuildsFromTheSourceTree(t *testing.T) {
	root := t.TempDir()
	main := filepath.Join(root, "conformance", "cmd", "refagent")
	require.NoError(t, os.MkdirAll(main, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module acpkit.dev\n\ngo 1.26.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main, "main.go"), []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644))
	t.Setenv("GOWORK", "off")
	cache := filepath.Join(t.TempDir(), "cache")
	l := AgentLocator{SourceRoots: []string{filepath.Join(root, "missing"), root}, CacheDir: cache, Go: "go"}

	path, err := l.Locate(context.Background())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, refagentName), path)
	out, err := exec.Command(path).CombinedOutput()
	require.NoError(t, err)
	assert.Equal(t, "built\n", string(out))
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary build output is left behind")
}

func TestAgentLocatorReportsABuildFailure(t *testing.T) {
	root := t.TempDir()
	main := filepath.Join(root, "conformance", "cmd", "refagent")
	require.NoError(t, os.MkdirAll(main, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module acpkit.dev\n\ngo 1.26.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main, "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644))
	t.Setenv("GOWORK", "off")
	l := AgentLocator{SourceRoots: []string{root}, CacheDir: t.TempDir(), Go: "go"}
	_, err := l.Locate(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "undefined")
}

func TestDefaultAgentLocatorFindsThisRepository(t *testing.T) {
	l := DefaultAgentLocator()
	require.NotEmpty(t, l.SourceRoots)
	_, err := os.Stat(filepath.Join(l.SourceRoots[0], "go.work"))
	assert.NoError(t, err, "the first candidate is the repository acprun was compiled from")
}
