package bench

import (
	stdjson "encoding/json"
	"testing"

	"acpkit.dev/acpsdk/gen"
	acp "github.com/coder/acp-go-sdk"
	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// oursChunkText returns the text of an agent_message_chunk decoded by
// acpsdk/gen, or "" when the update is anything else.
func oursChunkText(n *gen.SessionNotification) string {
	c, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk)
	if !ok {
		return ""
	}
	t, ok := c.Content.(*gen.ContentBlockText)
	if !ok {
		return ""
	}
	return t.Text
}

// TestSDK11_CodecSidesDoTheSameWork guards the codec benchmark's fairness:
// every side decodes the payload to the same values and encodes them back
// to JSON that decodes to the same values again.
func TestSDK11_CodecSidesDoTheSameWork(t *testing.T) {
	require.Len(t, chunkParams, 213, "issue #2 asks for a ~200-byte object")

	var ours gen.SessionNotification
	require.NoError(t, ours.UnmarshalJSON(chunkParams))
	require.Equal(t, gen.SessionID("sess_7f3a9c2e41b8"), ours.SessionID)
	require.Equal(t, chunkText, oursChunkText(&ours))
	oursOut, err := ours.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, string(chunkParams), string(oursOut))

	var coder acp.SessionNotification
	require.NoError(t, stdjson.Unmarshal(chunkParams, &coder))
	require.Equal(t, acp.SessionId("sess_7f3a9c2e41b8"), coder.SessionId)
	require.Equal(t, chunkText, coderChunkText(&coder))
	coderOut, err := stdjson.Marshal(&coder)
	require.NoError(t, err)
	require.JSONEq(t, string(chunkParams), string(coderOut))

	var floor floorNotification
	require.NoError(t, json.Unmarshal(chunkParams, &floor))
	require.Equal(t, "sess_7f3a9c2e41b8", floor.SessionID)
	require.Equal(t, chunkText, floor.Update.Content.Text)
	floorOut, err := json.Marshal(&floor)
	require.NoError(t, err)
	require.JSONEq(t, string(chunkParams), string(floorOut))
}
