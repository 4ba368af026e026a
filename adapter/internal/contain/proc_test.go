package contain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTD15_TokenInEnvironment(t *testing.T) {
	for env, want := range map[string]string{
		"":                                       "",
		"A=1\x00" + EnvToken + "=tok\x00B=2\x00": "tok",
		EnvToken + "=first\x00" + EnvToken + "=second": "first",
		"X" + EnvToken + "=no\x00":                     "",
		EnvToken + "\x00" + EnvToken + "x=y":           "",
		"\x00\x00" + EnvToken + "=":                    "",
		"argv0\x00arg\x00" + EnvToken + "=mac\x00":     "mac",
	} {
		assert.Equal(t, want, tokenIn([]byte(env)), "%q", env)
	}
}

func FuzzTokenIn(f *testing.F) {
	f.Add([]byte("A=1\x00" + EnvToken + "=tok\x00"))
	f.Add([]byte(EnvToken))
	f.Fuzz(func(t *testing.T, env []byte) {
		tok := tokenIn(env)
		if tok != "" {
			assert.Contains(t, string(env), EnvToken+"="+tok)
			assert.NotContains(t, tok, "\x00")
		}
	})
}
