package acpsdk

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// lockedBuffer is a writer the test can read after the Conn is closed.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FuzzConnInput feeds arbitrary bytes to a whole Conn (framer, classifier,
// dispatcher, writer). Whatever the input: no panic, the stream end ends the
// connection, every line written is one JSON-RPC message, and no line gets
// more than one answer.
func FuzzConnInput(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}` + "\n" + `{"jsonrpc":"2.0","method":"note"}`,
		"garbage\n[1,2]\n{}\n{\"id\":null,\"method\":\"ping\"}\n",
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"slow"}`,
		`{"jsonrpc":"2.0","id":5,"result":1}` + "\r\n\n" + `{"jsonrpc":"2.0","id":"x","method":"nope"}`,
		strings.Repeat("x", 300) + "\n" + `{"id":0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"panic"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out lockedBuffer
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "slow" && !req.IsNotification() {
				// A request waiting for cancellation: the stream end
				// cancels it once the messages before the end are handled.
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return echoHandler(ctx, req)
		})
		c := NewConn(bytes.NewReader(in), &out, h, &Options{MaxLineBytes: 256, MaxQueuedMessages: 2})
		<-c.Done()
		require.ErrorIs(t, c.Err(), ErrClosed)
		require.NoError(t, c.Flush(context.Background()))
		require.NoError(t, c.Close())

		requireAnswersWellFormed(t, in, out.String())
	})
}

// nestingSeeds are lines around the depth bound and very wide ones: deep
// and wide params, results and unknown members, brackets inside strings,
// and a line far deeper than any stack would take recursively.
func nestingSeeds() []string {
	deepObj := func(n int) string {
		return strings.Repeat(`{"a":`, n) + `1` + strings.Repeat("}", n)
	}
	wide := "[" + strings.Repeat(`1,"]",{},`, 3000) + "0]"
	wideObj := "{" + strings.Repeat(`"k":[],`, 3000) + `"z":null}`
	return []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + nested(jsonx.MaxDepth) + "}\n" + `{"jsonrpc":"2.0","id":2,"method":"echo","params":` + nested(jsonx.MaxDepth+1) + "}",
		`{"jsonrpc":"2.0","method":"note","params":{"_meta":` + deepObj(jsonx.MaxDepth) + "}}\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"result":` + nested(jsonx.MaxDepth+1) + `}` + "\n" + `{"jsonrpc":"2.0","id":5,"x":` + deepObj(jsonx.MaxDepth+1) + `,"method":"ping"}`,
		strings.Repeat("[", 20_000) + "\n" + strings.Repeat(`{"a":`, 5000) + "\n" + `{"jsonrpc":"2.0","id":6,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"echo","params":` + wide + "}\n" + `{"jsonrpc":"2.0","id":8,"method":"echo","params":` + wideObj + "}",
		`{"jsonrpc":"2.0","id":9,"method":"echo","params":["` + strings.Repeat("[{", 2000) + `"]}`,
	}
}

// FuzzConnNesting feeds deep and wide input to a whole Conn with the default
// line bound. Whatever the input: no crash (a recursive validator would
// overflow the stack), the stream end ends the connection, no line gets
// more than one answer, and every line written is a message the
// connection itself accepts, so anything echoed back can be read again.
func FuzzConnNesting(f *testing.F) {
	for _, s := range nestingSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out lockedBuffer
		c := NewConn(bytes.NewReader(in), &out, echoHandler, nil)
		<-c.Done()
		require.ErrorIs(t, c.Err(), ErrClosed)
		require.NoError(t, c.Flush(context.Background()))
		require.NoError(t, c.Close())

		lines := bytes.Count(in, []byte("\n")) + 1
		answers := 0
		for line := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			answers++
			m := classify([]byte(line), false, nil)
			require.Equal(t, kindResponse, m.kind, "%.200q: %s", line, m.why)
			require.NoError(t, m.refused, "%.200q", line)
		}
		require.LessOrEqual(t, answers, lines)
	})
}

// requireAnswersWellFormed checks what a connection wrote back for the
// fuzzed input in: every line is one valid JSON-RPC 2.0 object, and there
// are no more answers than input lines.
func requireAnswersWellFormed(t *testing.T, in []byte, out string) {
	t.Helper()
	lines := 0
	for range bytes.SplitSeq(in, []byte("\n")) {
		lines++
	}
	answers := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		answers++
		line := sc.Bytes()
		require.True(t, json.Valid(line), "%q", line)
		require.True(t, bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0",`)), "%q", line)
	}
	require.LessOrEqual(t, answers, lines)
}
