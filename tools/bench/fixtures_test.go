package bench

import (
	"bytes"
	"strconv"

	acp "github.com/coder/acp-go-sdk"
)

// chunkParams is the issue #2 payload: the params object of one
// agent_message_chunk session/update, 213 bytes.
var chunkParams = []byte(`{"sessionId":"sess_7f3a9c2e41b8","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"The parser now accepts a trailing comma; I added two tests for empty input and reran the suite."}}}`)

// chunkText is the text inside chunkParams, for checking decodes.
const chunkText = "The parser now accepts a trailing comma; I added two tests for empty input and reran the suite."

// floorNotification is the floor of the codec comparison: a plain struct
// with exactly the members of chunkParams, decoded by reflection with
// segmentio/encoding/json. It knows nothing of unions, unknown members or
// required fields, so no schema-faithful codec can beat it by much.
type floorNotification struct {
	SessionID string      `json:"sessionId"`
	Update    floorUpdate `json:"update"`
}

type floorUpdate struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       floorContent `json:"content"`
}

type floorContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// notificationLine frames params as one session/update notification line.
func notificationLine(params []byte) []byte {
	line := make([]byte, 0, len(params)+64)
	line = append(line, `{"jsonrpc":"2.0","method":"session/update","params":`...)
	line = append(line, params...)
	return append(line, "}\n"...)
}

// chunkStream is n session/update notification lines whose texts differ
// (a counter prefix), so that no layer can get away with caching a value.
func chunkStream(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * (len(chunkParams) + 72))
	for i := range n {
		b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c2e41b8","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
		b.WriteString(chunkTextN(i))
		b.WriteString("\"}}}}\n")
	}
	return b.Bytes()
}

// chunkTextN is the text of notification i of chunkStream.
func chunkTextN(i int) string { return strconv.Itoa(i) + " " + chunkText }

// coderChunkText returns the text of an agent_message_chunk decoded by
// coder's SDK, or "" when the update is anything else.
func coderChunkText(n *acp.SessionNotification) string {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		return c.Content.Text.Text
	}
	return ""
}
