package acpsdk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
	"acpkit.dev/acpsdk/internal/surface"
)

// trustedCases are session/update lines whose params the trusted dispatcher
// must treat exactly as gen.DispatchClient does: good ones, ones the schema
// rejects, and ones the line validation refuses before any dispatch
// (invalid UTF-8, params nested deeper than the decoders accept).
var trustedCases = []string{
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":7,"update":{}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"nope"}}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\xff\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}}}",
	`{"jsonrpc":"2.0","method":"session/update"}`,
	`{"jsonrpc":"2.0","method":"session/update","params":[]}`,
	`{"jsonrpc":"2.0","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a","line":-1}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"_meta":{"a":` + nested(jsonx.MaxDepth-2) + `}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"_meta":{"a":` + nested(jsonx.MaxDepth-1) + `}}}`,
}

// dispatchOutcome runs one dispatcher on a fresh fake client and says what
// happened: the error, or the update the handler got.
func dispatchOutcome(t *testing.T, d func(context.Context, gen.Client, string, []byte) (any, error), m inMsg) string {
	c := newFakeClient(t)
	_, err := d(context.Background(), c, m.method, m.params)
	if err != nil {
		return "error: " + err.Error()
	}
	select {
	case u := <-c.updates:
		b, err := json.Marshal(u)
		require.NoError(t, err)
		return "update: " + string(b)
	default:
		return "ok"
	}
}

// checkTrustedAgrees fails when the trusted dispatcher and the public one
// disagree about a line classify accepts.
func checkTrustedAgrees(t *testing.T, line []byte) {
	m := classify(line, false, nil)
	if m.kind != kindNotification && m.kind != kindRequest {
		return
	}
	if m.method == gen.MethodFsReadTextFile || m.method == gen.MethodSessionUpdate {
		want := dispatchOutcome(t, gen.DispatchClient, m)
		got := dispatchOutcome(t, surface.SpecOf(gen.Surface).DispatchClient, m)
		require.Equal(t, want, got, "line %q", line)
	}
}

func TestSDK10_TrustedDispatchAgreesWithPublic(t *testing.T) {
	for _, c := range trustedCases {
		checkTrustedAgrees(t, []byte(c))
	}
	// Params that are not UTF-8 are refused by the connection: they never
	// reach a dispatcher.
	m := classify([]byte(trustedCases[4]), false, nil)
	require.Equal(t, kindNotification, m.kind)
	require.ErrorIs(t, m.refused, jsonx.ErrUTF8)
	require.Nil(t, m.params)
	// Params as deep as the decoders accept are dispatched; deeper ones are
	// refused by the connection, as gen.DispatchClient refuses them.
	m = classify([]byte(trustedCases[len(trustedCases)-2]), false, nil)
	require.Equal(t, kindNotification, m.kind)
	require.Contains(t, dispatchOutcome(t, gen.DispatchClient, m), "update: ", "decoded and re-encoded")
	m = classify([]byte(trustedCases[len(trustedCases)-1]), false, nil)
	require.Equal(t, kindNotification, m.kind)
	require.ErrorIs(t, m.refused, ErrInvalidParams)
	require.Nil(t, m.params)
}

func FuzzTrustedDispatch(f *testing.F) {
	for _, c := range trustedCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkTrustedAgrees(t, line)
	})
}

// keptClient is a gen.Client that keeps every session/update it is given.
type keptClient struct {
	gen.Client // nil: only SessionUpdate is called
	got        []*gen.SessionNotification
}

func (c *keptClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	c.got = append(c.got, n)
	return nil
}

// TestSDK11_DecodedStringsShareTheirLineSafely: the typed side's strings
// share the lines they were read from, so no line may be written again
// once handed out. Many notifications of varied sizes (several blocks'
// worth, some lines longer than a block's quarter and read in chunks, one
// with an escape) are kept by the handler and checked after the stream.
func TestSDK11_DecodedStringsShareTheirLineSafely(t *testing.T) {
	const n = 3000
	text := func(i int) string {
		s := fmt.Sprintf("chunk %d ", i) + strings.Repeat("abcdefgh", i%97)
		if i%500 == 0 {
			s += strings.Repeat("L", lineSlabSize/3) // a line of its own
		}
		if i%7 == 0 {
			s += "\n\"escaped\""
		}
		return s
	}
	var in bytes.Buffer
	for i := range n {
		params, err := json.Marshal(map[string]any{"sessionId": fmt.Sprintf("s%d", i), "update": map[string]any{
			"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text(i)}}})
		require.NoError(t, err)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"session/update","params":%s}`+"\n", params)
	}
	c := &keptClient{}
	r, w := io.Pipe()
	side := NewClientSide(r, io.Discard, c, nil)
	go func() {
		// Odd-sized writes, so lines straddle the reader's buffer.
		data := in.Bytes()
		for len(data) > 0 {
			k := min(len(data), 1+len(data)%4093)
			_, _ = w.Write(data[:k])
			data = data[k:]
		}
		_ = w.Close()
	}()
	// The stream's end is seen after every notification read before it
	// was handled.
	<-side.Done()
	require.NoError(t, side.Close())
	require.Equal(t, n, len(c.got), "notifications handled")
	for i, got := range c.got {
		require.Equal(t, gen.SessionID(fmt.Sprintf("s%d", i)), got.SessionID)
		chunk := got.Update.(*gen.SessionUpdateAgentMessageChunk)
		require.Equal(t, text(i), chunk.Content.(*gen.ContentBlockText).Text, "notification %d", i)
	}
}
