package acpsdk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// The envelope walk is the line's validation: truncated or malformed input
// is an error, never a panic, and only valid objects pass.
func TestEnvelopeValidates(t *testing.T) {
	for _, s := range []string{
		`{`, `{"`, `{"a"`, `{"a":`, `{"a":"`, `{"a":"x\"`, `{"a":{`, `{"a":[1,"]"`, `{"a":1`, `{"a":1,`,
		`{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":}`, `{"a":1}`, `{}`, ` { } `, `{"a":1} x`, `{"a":"\x"}`,
		"{\"a\":\"\xff\"}", `{"a":[1,]}`, `{"a":01}`,
	} {
		w, err := envelope([]byte(s))
		if err == nil && w.refused != "" {
			// Not UTF-8, JSON otherwise: the member is named, refused.
			require.Equal(t, "{\"a\":\"\xff\"}", s)
			require.ErrorIs(t, w.refusedErr, jsonx.ErrUTF8)
			continue
		}
		if err == nil {
			require.Contains(t, []string{`{"a":1}`, `{}`, ` { } `}, s)
			require.Equal(t, jsonx.Validate([]byte(s)), nil, s)
		} else {
			require.Equal(t, wireMsg{}, w, s)
			require.Error(t, jsonx.Validate([]byte(s)), s)
		}
	}
}

// TestEnvelopeDepthIsPerMember: each member may nest as deep as the
// decoders allow, counted from the member's value; deeper ones are named,
// not validated, and leave the rest of the line readable.
func TestEnvelopeDepthIsPerMember(t *testing.T) {
	ok := `{"id":1,"params":` + nested(jsonx.MaxDepth-1) + `}`
	w, err := envelope([]byte(ok))
	require.NoError(t, err)
	require.Empty(t, w.refused)
	deep := `{"params":` + nested(jsonx.MaxDepth+1) + `,"id":1,"result":` + nested(jsonx.MaxDepth+1) + `}`
	w, err = envelope([]byte(deep))
	require.NoError(t, err)
	require.Equal(t, "params", w.refused)
	require.Equal(t, "1", string(w.ID))
	_, err = envelope([]byte(`{"params":` + nested(jsonx.MaxDepth+1) + `,"id":}`))
	require.Error(t, err, "the members after a deep one are still validated")
}

func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"m","params":{"a":["}",1]}}`))
	f.Add([]byte(`{"a":"\\"}`))
	f.Add([]byte(`{"params":` + strings.Repeat("[", jsonx.MaxDepth+1) + `"]"` + strings.Repeat("]", jsonx.MaxDepth+1) + `}`))
	f.Add([]byte(`{"params":` + strings.Repeat(`{"a":`, jsonx.MaxDepth+1) + `1` + strings.Repeat("}", jsonx.MaxDepth+1) + `}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any bytes: no panic, no hang, and the same verdict as the
		// decoders' validator except for members refused (nested too deep, or
		// holding strings that are not UTF-8).
		w, err := envelope(b)
		if err == nil && w.refused == "" {
			require.NoError(t, jsonx.Validate(b))
		}
		if jsonx.Validate(b) == nil && isObject(b) {
			require.NoError(t, err)
		}
	})
}

func isObject(b []byte) bool {
	i := jsonx.SkipSpace(b, 0)
	return i < len(b) && b[i] == '{'
}
