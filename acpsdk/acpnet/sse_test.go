package acpnet

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseAll feeds stream to a parser in chunks of size n and returns the
// events.
func parseAll(t *testing.T, stream string, n, max int) ([]string, error) {
	t.Helper()
	p := sseParser{max: max}
	var events []string
	emit := func(data []byte) error {
		events = append(events, string(data))
		return nil
	}
	for len(stream) > 0 {
		k := min(n, len(stream))
		if err := p.feed([]byte(stream[:k]), emit); err != nil {
			return events, err
		}
		stream = stream[k:]
	}
	return events, p.end(emit)
}

func TestTR6_EventStreamReader(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no space after the colon", "data:{\"a\":1}\n\n", []string{`{"a":1}`}},
		{"only one space is dropped", "data:  x\n\n", []string{" x"}},
		{"several data lines are joined by LF", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone CR line ends", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"a byte order mark", "\xef\xbb\xbfdata: a\n\n", []string{"a"}},
		{"a byte order mark on a later line", "data: a\n\n\xef\xbb\xbfdata: b\n\n", []string{"a", "b"}},
		{"event, id, retry and comments are ignored", ": hi\nevent: message\nid: 7\nretry: 10\ndata: a\n\n:\n\n", []string{"a"}},
		{"a field named like data is not data", "datum: a\ndata: b\n\n", []string{"b"}},
		{"blank lines without data make no event", "\n\n\n: keep-alive\n\n", nil},
		{"the end of the stream ends the last event", "data: a\n\ndata: b", []string{"a", "b"}},
		{"the end of the stream after a last line end", "data: a\n", []string{"a"}},
		{"empty data is an event", "data:\n\n", []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every chunking gives the same events: a line, a CRLF, a
			// BOM split between two reads is still one.
			for _, n := range []int{1, 2, 3, 7, len(tc.stream) + 1} {
				got, err := parseAll(t, tc.stream, n, 1<<10)
				require.NoError(t, err, "chunks of %d", n)
				assert.Equal(t, tc.want, got, "chunks of %d", n)
			}
		})
	}
}

func TestTR18_EventStreamReaderBounds(t *testing.T) {
	// An event's data over the bound, in one line or joined from several.
	_, err := parseAll(t, "data: "+strings.Repeat("x", 101)+"\n\n", 16, 100)
	assert.True(t, errors.Is(err, ErrMessageTooLarge), "got %v", err)
	_, err = parseAll(t, strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 3)+"\n", 16, 100)
	assert.True(t, errors.Is(err, ErrMessageTooLarge), "got %v", err)
	// A line that never ends (a comment, say) is bounded too.
	_, err = parseAll(t, ":"+strings.Repeat("x", 1000), 16, 100)
	assert.True(t, errors.Is(err, ErrMessageTooLarge), "got %v", err)
	// Exactly at the bound is fine.
	got, err := parseAll(t, "data: "+strings.Repeat("x", 100)+"\n\n", 16, 100)
	require.NoError(t, err)
	assert.Len(t, got[0], 100)
}

func TestEnvelopeReadsWhatRoutingNeeds(t *testing.T) {
	e, err := scanEnvelope([]byte(`{"jsonrpc":"2.0","id":"a\"b","method":"session/prompt","params":{"x":[1,{"sessionId":"no"}],"sessionId":"s\u0031"}}`), true)
	require.NoError(t, err)
	assert.True(t, e.isRequest())
	assert.Equal(t, "session/prompt", e.method)
	assert.Equal(t, "s1", e.sessionID, "the top-level member of params, unescaped")
	key, ok := idKey(e.id)
	require.True(t, ok)
	assert.Equal(t, `sa"b`, key)

	e, err = scanEnvelope([]byte(` {"id":3,"result":{"sessionId":"new"}} `), true)
	require.NoError(t, err)
	assert.True(t, e.isResponse())
	assert.Equal(t, "new", e.resultSessionID)
	key, _ = idKey(e.id)
	assert.NotEqual(t, key, func() string { k, _ := idKey([]byte(`"3"`)); return k }(), "the number 3 is not the string \"3\"")

	for _, bad := range []string{``, ` `, `{`, `{"a":}`, `{"a":1}x`, `{"a" 1}`, `nul`} {
		_, err := scanEnvelope([]byte(bad), true)
		assert.ErrorIs(t, err, errSyntax, "%q", bad)
	}
	e, err = scanEnvelope([]byte(`[{"id":1}]`), true)
	assert.ErrorIs(t, err, errNotObject)
	assert.Equal(t, shapeArray, e.shape)
	e, err = scanEnvelope([]byte(`"x"`), true)
	assert.ErrorIs(t, err, errNotObject)
	assert.Equal(t, shapeOther, e.shape)
}
