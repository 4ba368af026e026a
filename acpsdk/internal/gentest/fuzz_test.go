package gentest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// FuzzSDK3_SessionNotification: arbitrary session/update params through
// DispatchClient never panic; a failure is a *DecodeError under "params";
// what decodes re-encodes and decodes equal.
func FuzzSDK3_SessionNotification(f *testing.F) {
	for _, s := range []string{
		chunk,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","content":[{"type":"diff","path":"/a","oldText":null,"newText":"x"}],"rawOutput":{"ok":true}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]},"_meta":{"n":12345678901234567890}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"m","name":"Model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"}]}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"future","x":[1]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`,
		`null`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &fakeClient{}
		_, err := gen.DispatchClient(context.Background(), c, gen.MethodSessionUpdate, data)
		if err != nil {
			var de *gen.DecodeError
			require.True(t, errors.As(err, &de), "%T %v", err, err)
			require.True(t, strings.HasPrefix(de.Path, "params"), de.Path)
			return
		}
		require.Len(t, c.updates, 1)
		out, err := c.updates[0].MarshalJSON()
		require.NoError(t, err)
		var again gen.SessionNotification
		require.NoError(t, again.UnmarshalJSON(out), "%s", out)
		require.Equal(t, c.updates[0], &again)
	})
}
