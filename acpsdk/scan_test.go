package acpsdk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The envelope walk trusts the validator, but truncated or malformed input
// (which the validator rejects first) must still end the walk, not panic.
func TestEnvelopeNeverPanicsOnUnvalidatedInput(t *testing.T) {
	for _, s := range []string{
		`{`, `{"`, `{"a"`, `{"a":`, `{"a":"`, `{"a":"x\"`, `{"a":{`, `{"a":[1,"]"`, `{"a":1`, `{"a":1,`,
		`{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":}`, `{"a":1}`, `{}`, ` { } `,
	} {
		w, ok := envelope([]byte(s))
		if ok {
			require.Contains(t, []string{`{"a":1}`, `{}`, ` { } `}, s)
		} else {
			require.Equal(t, wireMsg{}, w, s)
		}
	}
}

func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"m","params":{"a":["}",1]}}`))
	f.Add([]byte(`{"a":"\\"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		envelope(b) // any bytes, validated or not: no panic, no hang
	})
}
