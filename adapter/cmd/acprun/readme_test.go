//go:build unix

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

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
	// A flag's line: "  -v, --verbose" or "      --command"; a wrapped
	// description is indented further.
	flags := regexp.MustCompile(`(?m)^(?:  -[a-z], |      )--([a-z-]+)`).FindAllStringSubmatch(stdout.String(), -1)
	require.NotEmpty(t, flags)
	for _, f := range flags {
		assert.True(t, strings.Contains(string(readme), "`--"+f[1]), "the README documents --%s", f[1])
	}
}

// The README's shell examples. A block the README marks with
// runsAsWritten is run line by line, exactly as written, by
// TestREADMEExamplesRunAsWritten (the one marked runsAtATerminal by
// TestPTY_READMEAskApprovesAWrite); every other example must need a
// credential, a host or a network the tests do not have, which
// TestREADMEExamplesThatDoNotRunSayWhy checks.
const (
	runsAsWritten   = "<!-- runs as written: adapter/cmd/acprun/readme_test.go -->"
	runsAtATerminal = "<!-- runs at a terminal: adapter/cmd/acprun/pty_test.go -->"
)

// readmeBlocks returns the command lines of the README's indented blocks
// that follow marker (every block when marker is ""), in order.
func readmeBlocks(t *testing.T, marker string) [][]string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	var blocks [][]string
	var cur []string
	marked, armed := false, false
	for _, l := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(l, "    "):
			cur = append(cur, strings.TrimPrefix(l, "    "))
			continue
		case len(cur) > 0:
			if marker == "" || marked {
				blocks = append(blocks, cur)
			}
			cur, marked = nil, false
		}
		switch {
		case strings.HasPrefix(l, "<!-- "):
			armed = l == marker
		case l == "" && armed:
			marked, armed = true, false
		default:
			armed, marked = false, false
		}
	}
	return blocks
}

// install runs the README's `make install` once, into a directory of its
// own, and returns it.
var install = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "acprun-install-")
	if err != nil {
		return "", err
	}
	installDir = dir
	cmd := exec.Command("make", "install")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make install: %v\n%s", err, out)
	}
	return dir, nil
})

// installDir is removed by TestMain's cleanup.
var installDir string

// installed is the directory `make install` filled.
func installed(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: make install builds every command")
	}
	dir, err := install()
	require.NoError(t, err)
	return dir
}

// TestInstallPutsStaticCommandsInGOBIN: the README's install from a clone.
func TestInstallPutsStaticCommandsInGOBIN(t *testing.T) {
	dir := installed(t)
	for _, cmd := range []string{"acprun", "acpcheck", "refagent"} {
		path := filepath.Join(dir, cmd)
		out, err := exec.Command(path, "--version").Output()
		require.NoError(t, err, cmd)
		assert.True(t, strings.HasPrefix(string(out), cmd+" "), "%s --version: %s", cmd, out)
		if runtime.GOOS != "linux" {
			continue
		}
		f, err := elf.Open(path)
		require.NoError(t, err)
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "%s is static: no dynamic loader", cmd)
		}
		f.Close()
	}
}

// readmeWorkspace is a git repository with one committed file, changed
// since, so the README's `git diff | …` has a diff to pipe.
func readmeWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	cmd := exec.Command("git", "add", "main.go")
	cmd.Dir = dir
	require.NoError(t, cmd.Run())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	return dir
}

// readmeChecks are what some examples must leave behind, beyond exit 0.
var readmeChecks = map[string]func(t *testing.T, dir, out string){
	`acprun --permissions approve-all "write"`: func(t *testing.T, dir, _ string) {
		assert.FileExists(t, filepath.Join(dir, "refagent-note.txt"), "the approved write happened")
	},
	`acprun --final "hello" > answer.txt`: func(t *testing.T, dir, _ string) {
		b, err := os.ReadFile(filepath.Join(dir, "answer.txt"))
		require.NoError(t, err)
		assert.Equal(t, "You said: hello\n", string(b))
	},
	`git diff | acprun --final "Review this diff:" -`: func(t *testing.T, _, out string) {
		assert.True(t, strings.HasPrefix(out, "You said: Review this diff:\n\ndiff --git a/main.go b/main.go\n"), "one turn, the instruction then the diff: %q", out)
	},
	`acprun show hello.jsonl`: func(t *testing.T, _, out string) {
		assert.Contains(t, out, `session/prompt #3: "hello"`)
	},
	// acprun graded as a client, as installed: OK, its one failure the
	// advisory clientInfo HS-1 leaves out (realclients/acprun.baseline).
	`acpcheck client -- acprun --command "{agent}" "hi"`: func(t *testing.T, _, out string) {
		assert.Regexp(t, `(?m)^handshake\.client-info\s+advisory\s+fail\b`, out)
		assert.Regexp(t, `(?m)^27 checks: 22 pass, 1 fail .*; 20 of 20 mandatory graded — OK`, out)
	},
}

// TestREADMEExamplesRunAsWritten runs every line of every block the README
// marks as runnable, with the installed commands first on PATH, in one
// workspace per block.
func TestREADMEExamplesRunAsWritten(t *testing.T) {
	bin := installed(t)
	blocks := readmeBlocks(t, runsAsWritten)
	require.GreaterOrEqual(t, len(blocks), 4)
	for _, block := range blocks {
		dir := readmeWorkspace(t)
		for _, line := range block {
			if line == "make install" {
				continue // what installed ran, into bin
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, "bash", "-c", line)
			cmd.Dir = dir
			if strings.HasPrefix(line, "make ") {
				cmd.Dir = repoRoot // the README's make targets run in the clone
			}
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			require.NoError(t, err, "%s\nstdout:\n%s\nstderr:\n%s", line, stdout.String(), stderr.String())
			if check := readmeChecks[line]; check != nil {
				check(t, dir, stdout.String())
			}
		}
	}
	var seen int
	for _, block := range blocks {
		for _, line := range block {
			if readmeChecks[line] != nil {
				seen++
			}
		}
	}
	assert.Equal(t, len(readmeChecks), seen, "every check names a line the README has")
}

// notRunnable are the README's command lines no test runs, by why.
var notRunnable = []struct {
	why   string
	lines *regexp.Regexp
}{
	{"needs a runtime's credential or a build host", regexp.MustCompile(`gemini|claude-agent-acp|codex-acp|opencode|copilot|qwen|cline|--ssh-host`)},
	{"resolves only once acpkit.dev is served (docs/RELEASING.md)", regexp.MustCompile(`@latest`)},
	{"is the whole test suite, this test among it", regexp.MustCompile(`^make test\b`)},
	{"is a synopsis, not a command", regexp.MustCompile(`\[flags\]`)},
	// The pair runs in acpcheck's TestTR13_GradesAnAgentServedAtAURL.
	{"serves on a port the OS picks, or dials the port it printed", regexp.MustCompile(`--listen 127\.0\.0\.1:0|:PORT/`)},
}

// TestREADMEExamplesThatDoNotRunSayWhy: every command line in the README's
// indented blocks runs in a test or is one of notRunnable.
func TestREADMEExamplesThatDoNotRunSayWhy(t *testing.T) {
	run := map[string]bool{}
	for _, marker := range []string{runsAsWritten, runsAtATerminal} {
		for _, block := range readmeBlocks(t, marker) {
			for _, l := range block {
				run[l] = true
			}
		}
	}
	command := regexp.MustCompile(`^(acprun|acpcheck|refagent|make|go|git|CGO_ENABLED=0) `)
	for _, block := range readmeBlocks(t, "") {
		for _, l := range block {
			if !command.MatchString(l) || run[l] {
				continue
			}
			ok := false
			for _, n := range notRunnable {
				ok = ok || n.lines.MatchString(l)
			}
			assert.True(t, ok, "README example %q neither runs in a test nor needs what tests lack", l)
		}
	}
}
