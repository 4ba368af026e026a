package refagent

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseWords_StrictForTheFlag(t *testing.T) {
	sc, err := ParseWords("slow stop=refusal exit=3 error=-32000 permission-allow-only")
	require.NoError(t, err)
	assert.True(t, sc.Slow)
	assert.Equal(t, "refusal", sc.StopReason)
	require.NotNil(t, sc.Exit)
	assert.Equal(t, 3, *sc.Exit)
	assert.Equal(t, -32000, sc.ErrorCode)
	assert.Equal(t, "allow-only", sc.Permission)

	for _, bad := range []string{"slwo", "exit=300", "exit=x", "stop=", "error=0", "wat=1"} {
		_, err := ParseWords(bad)
		assert.ErrorIs(t, err, ErrWord, bad)
	}
}

func TestScriptFor_ProseIsIgnoredAndTextIsTheDefault(t *testing.T) {
	sc := ScriptFor("", "Count from 1 to 1000, slow and steady, one number per line.")
	assert.True(t, sc.Slow)
	assert.True(t, sc.Text, "no content word: the text script")
	sc = ScriptFor("usage", "(thought) please")
	assert.True(t, sc.Usage, "flag words apply to every prompt")
	assert.True(t, sc.Thought)
	assert.False(t, sc.Text, "a content word replaces the default")
	sc = ScriptFor("", "exit=abc stop=")
	assert.Nil(t, sc.Exit, "a malformed word in a prompt is prose")
}

func TestParseFlags(t *testing.T) {
	o, err := ParseFlags([]string{"--load-session", "--words", "slow", "--slow-for", "2s"}, nil)
	require.NoError(t, err)
	assert.True(t, o.LoadSession)
	assert.Equal(t, "slow", o.Words)
	for _, bad := range [][]string{{"--descendant", "sideways"}, {"--words", "nope"}, {"extra"}, {"--no-such-flag"}} {
		_, err := ParseFlags(bad, discard{})
		assert.ErrorIs(t, err, ErrUsage, "%q", bad)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzParseWords: any flag value parses or fails with ErrWord; any prompt
// yields a script without panicking.
func FuzzParseWords(f *testing.F) {
	for _, s := range []string{"full slow", "stop=paused exit=1", "exit=-1", "error=x", "", "((slow))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseWords(s); err != nil {
			assert.ErrorIs(t, err, ErrWord)
		}
		sc := ScriptFor("", s)
		if sc.Exit != nil && (*sc.Exit < 0 || *sc.Exit > 255) {
			t.Fatalf("exit status %d out of range", *sc.Exit)
		}
	})
}

func ExampleScriptFor() {
	sc := ScriptFor("usage", "Please think (thought), then stop=refusal.")
	fmt.Println(sc.Thought, sc.Text, sc.Usage, sc.StopReason)
	// Output: true false true refusal
}
