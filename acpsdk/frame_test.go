package acpsdk

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// frameResult is one step of the framer's output: a line, or a skipped
// oversize line of the given size.
type frameResult struct {
	line    string
	skipped int64
}

func readAllFrames(t testing.TB, r io.Reader, max int) []frameResult {
	t.Helper()
	lr := newLineReader(r, max)
	var out []frameResult
	for {
		line, err := lr.next()
		if over, ok := errors.AsType[*OversizeError](err); ok {
			out = append(out, frameResult{skipped: over.Size})
			continue
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, frameResult{line: string(line)})
	}
}

// referenceFrames is the framer's contract written the slow, obvious way.
func referenceFrames(in []byte, max int) []frameResult {
	var out []frameResult
	parts := bytes.Split(in, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		p = bytes.TrimSuffix(p, []byte("\r")) // a terminator, not counted
		if len(p) > max {
			out = append(out, frameResult{skipped: int64(len(p))})
			continue
		}
		if blank(p) {
			continue
		}
		out = append(out, frameResult{line: string(p)})
	}
	return out
}

func TestFramer(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []frameResult
	}{
		{"lines", "a\nbb\n", 10, []frameResult{{line: "a"}, {line: "bb"}}},
		{"crlf", "a\r\nb\r\n", 10, []frameResult{{line: "a"}, {line: "b"}}},
		{"blank lines skipped", "\n \n\t\r\na\n\n", 10, []frameResult{{line: "a"}}},
		{"unterminated last line", "a\nb", 10, []frameResult{{line: "a"}, {line: "b"}}},
		{"exactly the bound", "12345\n", 5, []frameResult{{line: "12345"}}},
		{"SDK9 oversize skipped, next line kept", "123456\nok\n", 5, []frameResult{{skipped: 6}, {line: "ok"}}},
		{"oversize unterminated", "ok\n123456", 5, []frameResult{{line: "ok"}, {skipped: 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, readAllFrames(t, strings.NewReader(tt.in), tt.max))
			require.Equal(t, tt.want, referenceFrames([]byte(tt.in), tt.max))
		})
	}
}

// TestSDK9_OversizeLineSkippedWithoutBufferingIt feeds a line far larger
// than the read buffer through a reader that hands out small chunks, and
// checks the line after it survives.
func TestSDK9_OversizeLineSkippedWithoutBufferingIt(t *testing.T) {
	big := strings.Repeat("x", 5*readBufferSize+7)
	in := io.MultiReader(strings.NewReader(big+"\n"), strings.NewReader(`{"after":1}`+"\n"))
	got := readAllFrames(t, in, 2*readBufferSize)
	require.Equal(t, []frameResult{{skipped: int64(len(big))}, {line: `{"after":1}`}}, got)
}

// TestFramerLongLineUnderBound checks a line spanning several buffer fills
// is reassembled exactly.
func TestFramerLongLineUnderBound(t *testing.T) {
	long := strings.Repeat("0123456789", readBufferSize/3)
	got := readAllFrames(t, strings.NewReader(long+"\nz\n"), DefaultMaxLineBytes)
	require.Equal(t, []frameResult{{line: long}, {line: "z"}}, got)
}

// failingReader returns data and then a non-EOF error.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestFramerReadErrorDropsPartialLine(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(&failingReader{data: []byte("a\npartial"), err: boom}, 100)
	line, err := lr.next()
	require.NoError(t, err)
	require.Equal(t, "a", string(line))
	_, err = lr.next()
	require.ErrorIs(t, err, boom)
}

// oneByteReader hands out one byte per Read, the worst case for chunking.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func FuzzFramer(f *testing.F) {
	f.Add([]byte("a\nb\n"), uint8(4))
	f.Add([]byte("\r\n\r\n{}\r\n"), uint8(2))
	f.Add([]byte("12345678\nxy"), uint8(3))
	f.Add([]byte("  \n\t\nabc"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		m := int(max)%64 + 1
		want := referenceFrames(in, m)
		got := readAllFrames(t, bytes.NewReader(in), m)
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, got)
		got = readAllFrames(t, oneByteReader{bytes.NewReader(in)}, m)
		require.Equal(t, want, got)
	})
}

// TestSDK9_CRLFLineOfExactlyTheBound: the bound counts the line, not its
// terminator, whether that is "\n" or "\r\n".
func TestSDK9_CRLFLineOfExactlyTheBound(t *testing.T) {
	lr := newLineReader(strings.NewReader("abcd\r\nabcd\nabcde\r\nok\n"), 4)
	for _, want := range []string{"abcd", "abcd"} {
		line, err := lr.next()
		require.NoError(t, err)
		require.Equal(t, want, string(line))
	}
	_, err := lr.next()
	over, ok := errors.AsType[*OversizeError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, int64(5), over.Size)
	line, err := lr.next()
	require.NoError(t, err)
	require.Equal(t, "ok", string(line))
}
