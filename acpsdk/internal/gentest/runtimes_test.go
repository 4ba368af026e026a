package gentest

import (
	"bufio"
	"os"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// TestSDK5_RuntimeMessagesRoundTrip replays messages shaped like what real
// runtimes and clients send (Zed, claude-code-acp, gemini-cli: their member
// order, their extra members and variants, _meta with big integers) and
// requires each params/result to decode into its method's type and
// re-encode byte for byte.
func TestSDK5_RuntimeMessagesRoundTrip(t *testing.T) {
	f, err := os.Open("testdata/runtimes.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var msg struct {
			Method   string          `json:"method"`
			Params   json.RawMessage `json:"params"`
			ResultOf string          `json:"result_of"`
			Result   json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), "line %d", lines)
		name, raw := msg.Method, msg.Params
		if name == "" {
			name, raw = msg.ResultOf, msg.Result
		}
		m, ok := gen.LookupMethod(name)
		require.True(t, ok, "line %d: method %q", lines, name)
		v := m.NewParams()
		if msg.ResultOf != "" {
			v = m.NewResult()
		}
		require.NoError(t, v.(json.Unmarshaler).UnmarshalJSON(raw), "line %d", lines)
		out, err := v.(json.Marshaler).MarshalJSON()
		require.NoError(t, err, "line %d", lines)
		require.Equal(t, string(raw), string(out), "line %d (%s)", lines, name)
	}
	require.NoError(t, sc.Err())
	require.Greater(t, lines, 20)
}
