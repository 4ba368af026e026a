package acpnet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

// testAgent streams its prompts back: one chunk per word, and with a
// prompt containing "permission", a permission request whose outcome it
// reports as a last chunk. A prompt "notify N" sends N chunks; "session
// S" sends one update naming session S instead of its own.
type testAgent struct {
	side     atomic.Pointer[acpsdk.AgentSide]
	sessions atomic.Int64
}

func (a *testAgent) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return &gen.InitializeResponse{
		ProtocolVersion: p.ProtocolVersion,
		AgentInfo:       &gen.Implementation{Name: "acpnet-test-agent", Version: "1.0.0"},
	}, nil
}

func (a *testAgent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: gen.SessionID(fmt.Sprintf("sess-%d", a.sessions.Add(1)))}, nil
}

func (a *testAgent) Cancel(context.Context, *gen.CancelNotification) error { return nil }

func (a *testAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	client := a.side.Load().Client()
	text := promptText(p)
	say := func(s string) error {
		return client.SessionUpdate(ctx, &gen.SessionNotification{
			SessionID: p.SessionID,
			Update:    &gen.SessionUpdateAgentMessageChunk{Content: &gen.ContentBlockText{Text: s}},
		})
	}
	var n int
	if _, err := fmt.Sscanf(text, "notify %d", &n); err == nil {
		for i := range n {
			if err := say(fmt.Sprintf("chunk %d", i)); err != nil {
				return nil, err
			}
		}
		return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
	}
	for _, w := range strings.Fields(text) {
		if err := say(w); err != nil {
			return nil, err
		}
	}
	if strings.Contains(text, "permission") {
		res, err := client.RequestPermission(ctx, &gen.RequestPermissionRequest{
			SessionID: p.SessionID,
			ToolCall:  gen.ToolCallUpdate{ToolCallID: "call-1"},
			Options: []gen.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: gen.PermissionOptionKindAllowOnce},
				{OptionID: "reject", Name: "Reject", Kind: gen.PermissionOptionKindRejectOnce},
			},
		})
		if err != nil {
			return nil, err
		}
		outcome := "cancelled"
		if sel, ok := res.Outcome.(*gen.RequestPermissionOutcomeSelected); ok {
			outcome = string(sel.OptionID)
		}
		if err := say("permission: " + outcome); err != nil {
			return nil, err
		}
	}
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

func promptText(p *gen.PromptRequest) string {
	var b strings.Builder
	for _, block := range p.Prompt {
		if t, ok := block.(*gen.ContentBlockText); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// newTestAgent is the AgentFunc of the tests: a testAgent per connection.
func newTestAgent(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
	a := &testAgent{}
	side := acpsdk.NewAgentSide(stream, stream, a, nil)
	a.side.Store(side)
	return side.Conn()
}

// recordingClient records the text of every update, in order, and
// selects the first option of every permission request.
type recordingClient struct {
	mu      sync.Mutex
	updates []string
	perms   int
}

func (c *recordingClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	text := fmt.Sprintf("%T", n.Update)
	if chunk, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
		if t, ok := chunk.Content.(*gen.ContentBlockText); ok {
			text = t.Text
		}
	}
	c.mu.Lock()
	c.updates = append(c.updates, string(n.SessionID)+": "+text)
	c.mu.Unlock()
	return nil
}

func (c *recordingClient) RequestPermission(_ context.Context, r *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms++
	c.mu.Unlock()
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: r.Options[0].OptionID}}, nil
}

func (c *recordingClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

// serve starts a Handler for newAgent on a loopback test server and
// returns the endpoint URL; cleanup closes both.
func serve(t *testing.T, newAgent acpnet.AgentFunc, opts *acpnet.ServerOptions) (*acpnet.Handler, string) {
	t.Helper()
	h := acpnet.NewHandler(newAgent, opts)
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		require.NoError(t, h.Close())
		srv.Close()
	})
	return h, srv.URL + "/acp"
}

// testCtx bounds one test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialClient connects a strict client side to url over the transport its
// scheme names.
func dialClient(t *testing.T, url string, impl gen.Client) *acpsdk.ClientSide {
	t.Helper()
	stream, err := acpnet.Dial(testCtx(t), url, nil)
	require.NoError(t, err)
	side := acpsdk.NewClientSide(stream, stream, impl, &acpsdk.SideOptions{Strict: true})
	t.Cleanup(func() { _ = side.Close() })
	return side
}
