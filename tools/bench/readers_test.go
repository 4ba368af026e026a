package bench

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFloodReaderServesWholeLines checks the flood is what it claims: at
// least limit bytes, only whole lines, as many as lines() says.
func TestFloodReaderServesWholeLines(t *testing.T) {
	for _, limit := range []int64{1, 1000, 64 * 1024, 1<<20 + 7} {
		f := newFloodReader(limit)
		want := f.lines()
		got, err := io.ReadAll(f)
		require.NoError(t, err)
		require.GreaterOrEqual(t, int64(len(got)), limit)
		require.Equal(t, byte('\n'), got[len(got)-1], "limit %d", limit)
		require.Equal(t, want, int64(bytes.Count(got, []byte{'\n'})), "limit %d", limit)
		require.Equal(t, 0, len(got)%f.per, "limit %d: a partial line", limit)
		require.Less(t, int64(len(got)), limit+int64(f.per))
	}
}

// TestWindowReaderStaysWithinWindow checks the reader never serves a line
// more than window lines past the handler's count, and serves everything.
func TestWindowReaderStaysWithinWindow(t *testing.T) {
	const lines, window = 50, 8
	data := chunkStream(lines)
	cc := newChunkCounter(lines)
	w := newWindowReader(data, cc, window)
	var got []byte
	buf := make([]byte, 300)
	for {
		n, err := w.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		served := bytes.Count(got, []byte{'\n'})
		require.LessOrEqual(t, int64(served), cc.n.Load()+window)
		// Handle every complete line served so far, as a connection would.
		for cc.n.Load() < int64(served) {
			cc.saw("x")
		}
	}
	require.Equal(t, data, got)
}
