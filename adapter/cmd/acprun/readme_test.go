//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is where README.md lives, seen from this package.
const repoRoot = "../../.."

// quoted matches a README code block that quotes a compiled test:
// <!-- quote: path --> then a fenced go block.
var quoted = regexp.MustCompile("(?s)<!-- quote: ([^ ]+) -->\n```go\n(.*?)```")

// TestREADMEQuotesCompiledCode keeps the README's Go examples true: each
// quoted block must appear, line for line (indentation aside), in the file it
// names, which `make test` compiles and runs.
func TestREADMEQuotesCompiledCode(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	blocks := quoted.FindAllSubmatch(readme, -1)
	require.NotEmpty(t, blocks, "the README quotes its examples")
	for _, b := range blocks {
		path, block := string(b[1]), string(b[2])
		src, err := os.ReadFile(filepath.Join(repoRoot, path))
		require.NoError(t, err, "the README quotes %s", path)
		assert.True(t, containsLines(string(src), block), "README block not found in %s:\n%s", path, block)
	}
}

// containsLines reports whether want's lines occur consecutively in src,
// comparing lines without their leading tabs.
func containsLines(src, want string) bool {
	norm := func(s string) []string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		return lines
	}
	have, need := norm(src), norm(want)
	for i := 0; i+len(need) <= len(have); i++ {
		match := true
		for j := range need {
			if have[i+j] != need[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func TestContainsLines(t *testing.T) {
	src := "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"
	assert.True(t, containsLines(src, "if x {\n\ty()\n}"))
	assert.False(t, containsLines(src, "if x {\n\tz()\n}"))
	assert.False(t, containsLines(src, "y()\nif x {"))
}

// TestREADMEDocumentsEveryFlag keeps the README's acprun flag table complete.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	var stdout bytes.Buffer
	cmd := exec.Command(filepath.Join(bin, "acprun"), "--help")
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Run(), "--help exits 0")
	flags := regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?--([a-z-]+)`).FindAllStringSubmatch(stdout.String(), -1)
	require.NotEmpty(t, flags)
	for _, f := range flags {
		assert.True(t, strings.Contains(string(readme), "`--"+f[1]), "the README documents --%s", f[1])
	}
}
