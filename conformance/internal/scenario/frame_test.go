package scenario

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFramesRoundTripSplitAtMaxFrame(t *testing.T) {
	var b bytes.Buffer
	big := bytes.Repeat([]byte("x"), MaxFrame+10)
	require.NoError(t, WriteFrame(&b, KindStdout, big))
	require.NoError(t, WriteFrame(&b, KindStdinEnd, nil))
	var got []byte
	for range 2 {
		kind, data, err := ReadFrame(&b)
		require.NoError(t, err)
		assert.Equal(t, KindStdout, kind)
		got = append(got, data...)
	}
	assert.Equal(t, big, got, "a long write comes back whole, in two frames")
	kind, data, err := ReadFrame(&b)
	require.NoError(t, err)
	assert.Equal(t, KindStdinEnd, kind)
	assert.Empty(t, data, "an empty frame is one frame")
	_, _, err = ReadFrame(&b)
	assert.ErrorIs(t, err, io.EOF, "a clean end between frames")
}

func TestReadFrameRefusesBadFrames(t *testing.T) {
	for name, in := range map[string][]byte{
		"too long":      {KindStdout, 0xff, 0xff, 0xff, 0xff},
		"cut in header": {KindStdout, 0, 0},
		"cut in data":   {KindStdout, 0, 0, 0, 5, 'a', 'b'},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ReadFrame(bytes.NewReader(in))
			require.ErrorIs(t, err, ErrFrame)
		})
	}
}

func TestFromLink(t *testing.T) {
	socket, token, ok := FromLink("/tmp/acpcheck-1/" + LinkPrefix + "abc123")
	assert.True(t, ok)
	assert.Equal(t, "abc123", token)
	assert.Equal(t, "/tmp/acpcheck-1/"+SocketName, socket)
	_, _, ok = FromLink("/usr/bin/acpcheck")
	assert.False(t, ok)
	_, _, ok = FromLink(LinkPrefix)
	assert.False(t, ok, "a link names a token")
}

// FuzzReadFrame: no input panics the frame reader; it returns a frame,
// a clean end, or an ErrFrame (or the reader's own error).
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	_ = WriteFrame(&b, KindHello, []byte(`{"token":"t"}`))
	f.Add(b.Bytes())
	f.Add([]byte{KindStdout, 0, 0, 0, 0})
	f.Add([]byte{KindStdout, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			_, data, err := ReadFrame(r)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFrame) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(data) > MaxFrame {
				t.Fatalf("a frame of %d bytes", len(data))
			}
		}
	})
}
