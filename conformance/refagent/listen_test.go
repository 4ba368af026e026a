package refagent

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/internal/acpnettest"
)

// textClient collects the text of the agent's message chunks.
type textClient struct{ text strings.Builder }

func (c *textClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	if chunk, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
		if t, ok := chunk.Content.(*gen.ContentBlockText); ok {
			c.text.WriteString(t.Text)
		}
	}
	return nil
}

func (*textClient) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// TestTR2_TR13_TR16_ListenServesTheReferenceAgent serves the agent over
// each transport, as `refagent --listen 127.0.0.1:0 --transport T` does,
// and runs a turn through the URL it prints; exit=CODE ends only that
// connection.
func TestTR2_TR13_TR16_ListenServesTheReferenceAgent(t *testing.T) {
	for _, transport := range []string{TransportHTTP, TransportWS, TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			url := acpnettest.Serve(t, func(ctx context.Context, w io.Writer) error {
				return Listen(ctx, DefaultOptions(), "127.0.0.1:0", transport, w, slog.New(slog.DiscardHandler))
			})
			assert.True(t, strings.HasPrefix(url, transport+"://127.0.0.1:"), url)

			turn := func(prompt string) (*acpsdk.ClientSide, string, error) {
				stream, err := acpnet.Dial(ctx, url, nil)
				require.NoError(t, err)
				client := &textClient{}
				side := acpsdk.NewClientSide(stream, stream, client, nil)
				_, err = side.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
				require.NoError(t, err)
				sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: t.TempDir(), McpServers: []gen.McpServer{}})
				require.NoError(t, err)
				_, err = side.Agent().Prompt(ctx, &gen.PromptRequest{SessionID: sess.SessionID, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: prompt}}})
				return side, client.text.String(), err
			}
			side, text, err := turn("hi")
			require.NoError(t, err)
			assert.Equal(t, "Hello, from the reference agent.You said: hi", text)
			require.NoError(t, side.Close())

			side, _, err = turn("exit=3")
			require.Error(t, err, "exit=3 ends that connection")
			<-side.Done()
			_ = side.Close()

			side, _, err = turn("still here")
			require.NoError(t, err, "the server goes on")
			require.NoError(t, side.Close())
		})
	}
}
