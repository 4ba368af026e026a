package bench

import (
	"bytes"
	"io"
)

// coderWindow is how many notifications windowReader lets coder's
// connection read ahead of its handler: well inside its fixed queue of
// 1024, past which it closes the connection.
const coderWindow = 512

// windowReader serves a stream of lines, but never more than window lines
// ahead of what the handler has counted. coder's connection has no
// backpressure: when its notification queue (1024) is full it closes the
// connection, so on a fast stream it fails after about a thousand
// notifications. The window stands in for the backpressure it lacks, so
// that its throughput can be measured at all; it costs a channel receive
// per wait, which counts against coder, not for it.
type windowReader struct {
	data   []byte
	pos    int
	ends   []int // ends[i] is the offset just past line i's newline
	window int64
	cc     *chunkCounter
}

func newWindowReader(data []byte, cc *chunkCounter, window int) *windowReader {
	w := &windowReader{data: data, window: int64(window), cc: cc}
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			w.ends = append(w.ends, len(data))
			break
		}
		off += i + 1
		w.ends = append(w.ends, off)
	}
	return w
}

func (w *windowReader) Read(p []byte) (int, error) {
	if w.pos >= len(w.data) {
		return 0, io.EOF
	}
	for {
		lines := w.cc.n.Load() + w.window
		limit := len(w.data)
		if lines < int64(len(w.ends)) {
			limit = w.ends[lines-1]
		}
		if w.pos < limit {
			n := copy(p, w.data[w.pos:limit])
			w.pos += n
			return n, nil
		}
		<-w.cc.progress
	}
}
