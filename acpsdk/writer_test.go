package acpsdk

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// TestSP8_RecycledFramesArriveIntact: the writer recycles the buffers
// messages were encoded into once it has written them. Messages of many
// sizes (some past the size a recycled buffer keeps) queued from several
// goroutines, requests answered by handlers among them, must each reach
// the peer exactly as encoded; under -race a buffer reused while still
// read would also be reported.
func TestSP8_RecycledFramesArriveIntact(t *testing.T) {
	h := HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		var p struct{ Text string }
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		return map[string]string{"echo": p.Text}, nil
	})
	c, p := newRawPeer(t, h, nil)
	ctx := t.Context()
	const senders, each = 4, 50
	text := func(s, i int) string {
		return strings.Repeat(strconv.Itoa(s), 1+(i*997)%(maxRecycledFrame+4096))
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				if err := c.Notify(ctx, "note", map[string]any{"s": s, "i": i, "text": text(s, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range each {
		p.sendAsync(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"m","params":{"text":"` + text(9, i) + `"}}`)
	}
	wg.Wait()
	next := make([]int, senders)
	answered := 0
	for range senders*each + each {
		var m struct {
			Method string
			ID     *int
			Params struct {
				S, I int
				Text string
			}
			Result struct{ Echo string }
		}
		require.NoError(t, json.Unmarshal([]byte(p.recv()), &m))
		if m.ID != nil {
			require.Equal(t, text(9, *m.ID), m.Result.Echo, "answer %d", *m.ID)
			answered++
			continue
		}
		s := m.Params.S
		require.Equal(t, next[s], m.Params.I, "sender %d's notifications in order", s)
		require.Equal(t, text(s, m.Params.I), m.Params.Text)
		next[s]++
	}
	require.Equal(t, each, answered)
}
