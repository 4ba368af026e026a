package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parse runs parseFlags with a fixed directory and stdin.
func parse(t *testing.T, stdin string, args ...string) (Config, error) {
	t.Helper()
	return parseFlags(args, flagInput{stdin: strings.NewReader(stdin), getwd: func() (string, error) { return "/wd", nil }})
}

func TestFlagsStandAnywhereOnTheLine(t *testing.T) {
	c, err := parse(t, "", "hello", "--json", "world", "--cwd", "ws")
	require.NoError(t, err)
	assert.True(t, c.JSON, "a flag after a prompt is a flag, not a second prompt")
	assert.Equal(t, []string{"hello", "world"}, c.Prompts)
	assert.Equal(t, "/wd/ws", c.Cwd)
}

func TestDoubleDashEndsTheFlags(t *testing.T) {
	c, err := parse(t, "", "--json", "--", "--cwd", "-v")
	require.NoError(t, err)
	assert.True(t, c.JSON)
	assert.Equal(t, []string{"--cwd", "-v"}, c.Prompts)
	assert.Equal(t, "/wd", c.Cwd)
}

func TestPromptsFromFilesAndStdinInCommandLineOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.txt")
	require.NoError(t, os.WriteFile(file, []byte("from a file\n"), 0o644))
	c, err := parse(t, "from stdin", "-", "first", "--file", file, "last")
	require.NoError(t, err)
	assert.Equal(t, []string{"from stdin", "first", "from a file\n", "last"}, c.Prompts, "first on the line, stdin is a turn of its own")
}

// TestStdinJoinsThePromptBeforeIt: `git diff | acprun "Review this diff:" -`
// is one turn — the instruction, a blank line, the diff — not the
// instruction alone and then the diff without it (issue #30).
func TestStdinJoinsThePromptBeforeIt(t *testing.T) {
	const diff = "diff --git a/x b/x\n+new line\n"
	c, err := parse(t, diff, "--json", "--command", "gemini --acp", "Review this diff:", "-")
	require.NoError(t, err)
	assert.Equal(t, []string{"Review this diff:\n\n" + diff}, c.Prompts)

	c, err = parse(t, diff, "Summarise it.", "Review this diff:\n", "-", "Then say thanks.")
	require.NoError(t, err)
	assert.Equal(t, []string{"Summarise it.", "Review this diff:\n\n" + diff, "Then say thanks."}, c.Prompts, "other prompts stay turns of their own")

	c, err = parse(t, diff, "-")
	require.NoError(t, err)
	assert.Equal(t, []string{diff}, c.Prompts, "alone, stdin is the turn")
}

func TestPromptFileAndStdinErrorsAreUsageErrors(t *testing.T) {
	_, err := parse(t, "", "--file", "/nonexistent/prompt.txt")
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Reason, "--file")
	_, err = parse(t, "x", "-", "-")
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Reason, "may be given once")
}

func TestVersionPrintsAndExitsZero(t *testing.T) {
	h := newHarness(newFake())
	assert.Equal(t, ExitCompleted, h.run("--version"))
	assert.Regexp(t, `^acprun \S+ .*\(go1\.[0-9.]+ \w+/\w+\)\n$`, h.stdout.String())
	assert.Zero(t, h.rt.stopCalls, "--version starts no session")
}
