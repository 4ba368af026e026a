package gentest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// TestSDK11_HotPathAllocations: decoding the agent_message_chunk
// notification costs at most 8 allocations (issue #2's bound; it is 3: the
// private copy of the input that the strings share, the update variant and
// the content variant), and encoding it one (the output buffer).
func TestSDK11_HotPathAllocations(t *testing.T) {
	data := []byte(chunk)
	var n gen.SessionNotification
	decode := testing.AllocsPerRun(200, func() {
		n = gen.SessionNotification{}
		if err := n.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, decode, 8.0)
	require.Equal(t, 3.0, decode, "a change here is a regression worth a look")
	encode := testing.AllocsPerRun(200, func() {
		if _, err := n.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 1.0, encode)
}
