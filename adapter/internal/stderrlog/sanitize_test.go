package stderrlog

import (
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSS3_SanitizeStripsEscapesAndControls(t *testing.T) {
	cases := map[string]string{
		"plain":                         "plain",
		"\x1b[1;31mred\x1b[0m":          "red",
		"a\x1b]8;;http://x\x1b\\link":   "alink",
		"\x1b]0;title\x07after":         "after",
		"\x1bPdcs data\x1b\\x":          "x",
		"\x1b(Bcharset":                 "charset",
		"\x1bcreset":                    "reset",
		"\u009b2Jc1 csi":                "c1 csi",
		"tab\there":                     "tab here",
		"bell\x07 nul\x00 del\x7f":      "bell nul del",
		"bad \xff utf8":                 "bad \ufffd utf8",
		"progress 10%\r20%\r":           "progress 10%20%",
		"unterminated \x1b]osc forever": "unterminated ",
		"lone escape at end \x1b":       "lone escape at end ",
		"héllo wörld ✓":                 "héllo wörld ✓",
	}
	for in, want := range cases {
		assert.Equal(t, want, Sanitize(in), "%q", in)
	}
}

func TestSS3_MaskSecrets(t *testing.T) {
	m := NewMasker([]string{
		"GEMINI_API_KEY=AIzaEnvironmentValue0001",
		"MY_TOKEN=short", // too short to mask everywhere
		"HOME=/home/someone",
	})
	cases := map[string]string{
		"using key AIzaEnvironmentValue0001 now":         "using key *** now",
		"HOME is /home/someone":                          "HOME is /home/someone",
		"password=hunter22 user=bob":                     "password=*** user=bob",
		`{"api_key": "abc def", "x": 1}`:                 `{"api_key": ***, "x": 1}`,
		"Authorization: Basic dXNlcjpwYXNz":              "Authorization: Basic ***",
		"Bearer eyJhbGciOi.eyJzdWIiOi.signature":         "Bearer ***",
		"fetch https://bob:pa55w0rd@example.com/x":       "fetch https://***@example.com/x",
		"key sk-abcdefghijklmnopqrstuv used":             "key *** used",
		"gh token ghp_abcdefghijklmnopqrstuvwxyz0123":    "gh token ***",
		"aws AKIAABCDEFGHIJKLMNOP":                       "aws ***",
		"google AIzaSyA1234567890abcdefghijklmnopqrstuv": "google ***",
		"nothing secret here":                            "nothing secret here",
	}
	for in, want := range cases {
		assert.Equal(t, want, m.Mask(in), "%q", in)
	}
}

// TestSS3_DefaultMaskerFollowsTheEnvironment checks the kept default
// Masker: the same one while the environment stays, a new one that masks
// the new value (and no longer the old) once a secret changes.
func TestSS3_DefaultMaskerFollowsTheEnvironment(t *testing.T) {
	t.Setenv("ACPKIT_TEST_API_KEY", "first-secret-value")
	m := DefaultMasker()
	assert.Same(t, m, DefaultMasker(), "an unchanged environment reuses the masker")
	assert.Equal(t, "key *** here", m.Mask("key first-secret-value here"))

	t.Setenv("ACPKIT_TEST_API_KEY", "second-secret-value")
	m2 := DefaultMasker()
	assert.NotSame(t, m, m2)
	assert.Equal(t, "key *** here", m2.Mask("key second-secret-value here"))
	assert.Equal(t, "key first-secret-value here", m2.Mask("key first-secret-value here"))
}

// BenchmarkDefaultMasker is the masker a session start takes: the
// environment read and compared with the kept one's.
func BenchmarkDefaultMasker(b *testing.B) {
	for b.Loop() {
		_ = DefaultMasker()
	}
}

// BenchmarkNewMasker is building one from this environment, what each start
// did before the kept one.
func BenchmarkNewMasker(b *testing.B) {
	env := os.Environ()
	for b.Loop() {
		_ = NewMasker(env)
	}
}

// FuzzCollectorLines checks the invariants every kept line and tail keep,
// whatever a runtime writes to stderr.
func FuzzCollectorLines(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[31mx\x1b[0m\n", "\x1b]", "\xff\xfe\n\x00", "token=x\n\x9b1m", strings.Repeat("é", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c := Start(strings.NewReader(in), nil, NewMasker(nil))
		<-c.Done()
		for _, l := range c.Lines() {
			if l == "" || l != strings.TrimSpace(l) || !utf8.ValidString(l) {
				t.Fatalf("line not trimmed, empty or invalid: %q", l)
			}
			for _, r := range l {
				if unicode.IsControl(r) {
					t.Fatalf("control rune %U kept in %q", r, l)
				}
			}
		}
		tail := c.Tail()
		if len(tail) > TailBytes || !utf8.ValidString(tail) || tail == "" {
			t.Fatalf("bad tail %q", tail)
		}
	})
}
