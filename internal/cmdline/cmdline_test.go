package cmdline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSet is a flag set like the commands' own.
func testSet() (*FlagSet, *bool, *string, *time.Duration, *bool) {
	fs := New("tool", "usage: tool [flags] [prompt ...]\n\nDoes things.")
	js := fs.Bool("json", false, "print JSON")
	cmd := fs.String("command", "", "the agent `COMMAND`")
	d := fs.Duration("read-timeout", 30*time.Second, "bound on each wait")
	v := fs.BoolP("verbose", "v", false, "say more")
	return fs, js, cmd, d, v
}

func TestUnknownFlagSuggestsTheNearestOne(t *testing.T) {
	for _, tc := range []struct{ arg, reason, suggestion string }{
		{"--jsn", "unknown flag --jsn", "--json"},
		{"--josn", "unknown flag --josn", "--json"},
		{"--comand", "unknown flag --comand", "--command"},
		{"--read-timout", "unknown flag --read-timout", "--read-timeout"},
		{"--verb", "unknown flag --verb", "--verbose"},
		{"--zzzzzz", "unknown flag --zzzzzz", ""},
		{"-x", "unknown flag -x", ""},
	} {
		fs, _, _, _, _ := testSet()
		err := fs.Parse([]string{tc.arg})
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.arg)
		assert.Equal(t, tc.reason, ue.Reason, tc.arg)
		assert.Equal(t, tc.suggestion, ue.Suggestion, tc.arg)
	}
}

func TestFailGivesTheShortUsageNotEveryFlag(t *testing.T) {
	fs, _, _, _, _ := testSet()
	var w bytes.Buffer
	code := fs.Fail(&w, fs.Parse([]string{"--jsn"}))
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "tool: unknown flag --jsn (did you mean --json?)\nusage: tool [flags] [prompt ...]\nRun 'tool --help' for the flags.\n", w.String())
}

func TestHelpIsAskedForNotAnError(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		fs, _, _, _, _ := testSet()
		assert.ErrorIs(t, fs.Parse([]string{arg}), ErrHelp)
	}
	fs, _, _, _, _ := testSet()
	var w bytes.Buffer
	fs.Help(&w)
	assert.Equal(t, "usage: tool [flags] [prompt ...]\n\nDoes things.\n\nFlags:\n"+
		"      --json                    print JSON\n"+
		"      --command COMMAND         the agent COMMAND\n"+
		"      --read-timeout duration   bound on each wait (default 30s)\n"+
		"  -v, --verbose                 say more\n", w.String(), "in the order defined, defaults only when not zero")
}

func TestDurationsTakeBareSecondsOrSayUseAUnit(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "0.5": 500 * time.Millisecond, "1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond, "0": 0} {
		fs, _, _, d, _ := testSet()
		require.NoError(t, fs.Parse([]string{"--read-timeout", in}), in)
		assert.Equal(t, want, *d, in)
	}
	fs, _, _, _, _ := testSet()
	err := fs.Parse([]string{"--read-timeout", "soon"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"soon" is not a duration: use a unit, e.g. 5s`)
	_, err = ParseDuration("1e300")
	assert.Error(t, err, "no overflow into a wrong duration")
}

func TestSingleDashLongFlagsKeepWorking(t *testing.T) {
	fs, js, cmd, d, v := testSet()
	require.NoError(t, fs.Parse([]string{"-json", "-command", "-v", "-read-timeout=2", "-v"}))
	assert.True(t, *js)
	assert.Equal(t, "-v", *cmd, "a flag's value is never rewritten")
	assert.Equal(t, 2*time.Second, *d)
	assert.True(t, *v)
	fs, _, _, _, _ = testSet()
	require.NoError(t, fs.Parse([]string{"--", "-json"}))
	assert.Equal(t, []string{"-json"}, fs.Args(), "nothing after -- is a flag")
}

func TestParseInterleavedKeepsTheOrder(t *testing.T) {
	fs := New("tool", "usage: tool")
	var order []string
	fs.Func("file", "a file", func(s string) error { order = append(order, "file:"+s); return nil })
	js := fs.Bool("json", false, "")
	err := fs.ParseInterleaved([]string{"a", "--file", "f1", "-", "--json", "b", "--", "--file", "-"}, func(s string) { order = append(order, s) })
	require.NoError(t, err)
	assert.True(t, *js)
	assert.Equal(t, []string{"a", "file:f1", "-", "b", "--file", "-"}, order)
}

func TestVersionNamesTheCommandAndToolchain(t *testing.T) {
	assert.Regexp(t, `^refagent \S+ .*\(go1\.[0-9.]+ \w+/\w+\)$`, Version("refagent"))
}

func TestUsageErrorText(t *testing.T) {
	assert.Equal(t, "bad", Usagef("bad").Error())
	assert.Equal(t, "x (did you mean --y?)", (&UsageError{Reason: "x", Suggestion: "--y"}).Error())
	assert.False(t, errors.Is(Usagef("x"), ErrHelp))
}

func ExampleFlagSet() {
	fs := New("tool", "usage: tool [flags]")
	fs.Bool("json", false, "print JSON")
	err := fs.Parse([]string{"--jsno"})
	fs.Fail(os.Stdout, err)
	fmt.Println(ParseDuration("5"))
	// Output:
	// tool: unknown flag --jsno (did you mean --json?)
	// usage: tool [flags]
	// Run 'tool --help' for the flags.
	// 5s <nil>
}
