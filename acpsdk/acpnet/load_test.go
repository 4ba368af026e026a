package acpnet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// LoadSession replays ten chunks for any session, then answers.
func (a *testAgent) LoadSession(ctx context.Context, p *gen.LoadSessionRequest) (*gen.LoadSessionResponse, error) {
	client := a.side.Load().Client()
	for i := range 10 {
		err := client.SessionUpdate(ctx, &gen.SessionNotification{
			SessionID: p.SessionID,
			Update:    &gen.SessionUpdateAgentMessageChunk{Content: &gen.ContentBlockText{Text: fmt.Sprintf("replay %d", i)}},
		})
		if err != nil {
			return nil, err
		}
	}
	return &gen.LoadSessionResponse{}, nil
}

func TestTR7_LoadReplayBeforeItsAnswer(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	for i := range 20 {
		ctx := testCtx(t)
		client := &recordingClient{}
		side := dialClient(t, url, client)
		require.NoError(t, side.Conn().Call(ctx, "initialize", &gen.InitializeRequest{ProtocolVersion: 1}, nil))
		require.NoError(t, side.Conn().Call(ctx, "session/load", &gen.LoadSessionRequest{SessionID: "old", Cwd: "/", McpServers: []gen.McpServer{}}, nil))
		got := client.take()
		assert.Len(t, got, 10, "round %d: %s", i, strings.Join(got, ", "))
		require.NoError(t, side.Close())
	}
}
