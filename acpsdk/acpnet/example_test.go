package acpnet_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

// echoAgent streams each prompt back as one chunk.
type echoAgent struct {
	side *acpsdk.AgentSide
}

func (a *echoAgent) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return &gen.InitializeResponse{ProtocolVersion: p.ProtocolVersion}, nil
}

func (a *echoAgent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: "session-1"}, nil
}

func (a *echoAgent) Cancel(context.Context, *gen.CancelNotification) error { return nil }

func (a *echoAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	for _, block := range p.Prompt {
		if text, ok := block.(*gen.ContentBlockText); ok {
			err := a.side.Client().SessionUpdate(ctx, &gen.SessionNotification{
				SessionID: p.SessionID,
				Update:    &gen.SessionUpdateAgentMessageChunk{Content: &gen.ContentBlockText{Text: "echo: " + text.Text}},
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

// printClient prints the agent's message chunks.
type printClient struct{}

func (printClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	if chunk, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
		if text, ok := chunk.Content.(*gen.ContentBlockText); ok {
			fmt.Println("update:", text.Text)
		}
	}
	return nil
}

func (printClient) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// runTurn runs initialize, session/new and one prompt through a client side.
func runTurn(ctx context.Context, client *acpsdk.ClientSide, text string) {
	if _, err := client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion}); err != nil {
		panic(err)
	}
	sess, err := client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	if err != nil {
		panic(err)
	}
	res, err := client.Agent().Prompt(ctx, &gen.PromptRequest{
		SessionID: sess.SessionID,
		Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: text}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("stop reason:", res.StopReason)
}

// Serving an agent over Streamable HTTP and WebSocket, and dialing it. The
// Handler starts one agent per connection; the client side reads and
// writes the dialed stream as it would a subprocess's pipes.
func ExampleNewHandler() {
	ctx := context.Background()

	// The server: the endpoint, on loopback.
	handler := acpnet.NewHandler(func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
		agent := &echoAgent{}
		agent.side = acpsdk.NewAgentSide(stream, stream, agent, nil)
		return agent.side.Conn()
	}, nil)
	defer handler.Close()
	mux := http.NewServeMux()
	mux.Handle("/acp", handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/acp"

	// The client, over Streamable HTTP.
	stream, err := acpnet.Dial(ctx, url, nil)
	if err != nil {
		panic(err)
	}
	client := acpsdk.NewClientSide(stream, stream, printClient{}, nil)
	runTurn(ctx, client, "over HTTP")
	client.Close() // sends DELETE

	// The same endpoint over WebSocket.
	stream, err = acpnet.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		panic(err)
	}
	client = acpsdk.NewClientSide(stream, stream, printClient{}, nil)
	runTurn(ctx, client, "over WebSocket")
	client.Close()

	// Output:
	// update: echo: over HTTP
	// stop reason: end_turn
	// update: echo: over WebSocket
	// stop reason: end_turn
}

// Serving an agent over raw TCP, one JSON message per line, as
// `copilot --acp --port N` does, and dialing it.
func ExampleTCPServer() {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	server := acpnet.NewTCPServer(func(stream io.ReadWriteCloser, _ acpnet.Peer) *acpsdk.Conn {
		agent := &echoAgent{}
		agent.side = acpsdk.NewAgentSide(stream, stream, agent, nil)
		return agent.side.Conn()
	}, nil)
	go server.Serve(ln)
	defer server.Close()

	conn, err := acpnet.DialTCP(ctx, ln.Addr().String())
	if err != nil {
		panic(err)
	}
	client := acpsdk.NewClientSide(conn, conn, printClient{}, nil)
	defer client.Close()
	runTurn(ctx, client, "over TCP")

	// Output:
	// update: echo: over TCP
	// stop reason: end_turn
}
