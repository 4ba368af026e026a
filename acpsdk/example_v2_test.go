package acpsdk_test

import (
	"context"
	"fmt"
	"io"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen/v2"
)

// v2EchoAgent is an agent on the v2 draft surface that echoes prompts.
type v2EchoAgent struct {
	// client is set once NewAgentSideOf has returned; a prompt comes
	// after initialize and session/new, so it is set by then.
	client *v2.ClientPeer
}

func (a *v2EchoAgent) Initialize(ctx context.Context, p *v2.InitializeRequest) (*v2.InitializeResponse, error) {
	return &v2.InitializeResponse{
		ProtocolVersion: v2.LatestProtocolVersion,
		Info:            v2.Implementation{Name: "v2-echo", Version: "1.0.0"},
		// In v2 an agent without session capabilities offers no session/* method.
		Capabilities: v2.AgentCapabilities{Session: &v2.SessionCapabilities{}},
	}, nil
}

func (a *v2EchoAgent) NewSession(ctx context.Context, p *v2.NewSessionRequest) (*v2.NewSessionResponse, error) {
	return &v2.NewSessionResponse{SessionID: "session-1"}, nil
}

func (a *v2EchoAgent) Prompt(ctx context.Context, p *v2.PromptRequest) (*v2.PromptResponse, error) {
	for _, block := range p.Prompt {
		if text, ok := block.(*v2.ContentBlockText); ok {
			err := a.client.UpdateSession(ctx, &v2.UpdateSessionNotification{
				SessionID: p.SessionID,
				Update: &v2.SessionUpdateAgentMessageChunk{
					MessageID: "message-1",
					Content:   &v2.ContentBlockText{Text: "echo: " + text.Text},
				},
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return &v2.PromptResponse{MessageID: "message-1"}, nil
}

func (a *v2EchoAgent) CancelSession(ctx context.Context, p *v2.CancelSessionNotification) error {
	return nil
}

// v2PrintClient prints the agent's message chunks.
type v2PrintClient struct{}

func (v2PrintClient) UpdateSession(ctx context.Context, p *v2.UpdateSessionNotification) error {
	if chunk, ok := p.Update.(*v2.SessionUpdateAgentMessageChunk); ok {
		if text, ok := chunk.Content.(*v2.ContentBlockText); ok {
			fmt.Println("update:", text.Text)
		}
	}
	return nil
}

func (v2PrintClient) RequestPermission(ctx context.Context, p *v2.RequestPermissionRequest) (*v2.RequestPermissionResponse, error) {
	return nil, &acpsdk.Error{Code: acpsdk.CodeMethodNotFound, Message: "no permissions here"}
}

// The same runtime over the v2 draft surface (package
// acpkit.dev/acpsdk/gen/v2): typed peers and dispatch of that schema, and
// strict mode by its capabilities.
func ExampleNewAgentSideOf_v2() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	impl := &v2EchoAgent{}
	agent := acpsdk.NewAgentSideOf(v2.Surface, clientToAgentR, agentToClientW, v2.Agent(impl), nil)
	impl.client = agent.Client() // a *v2.ClientPeer
	defer agent.Close()
	client := acpsdk.NewClientSideOf(v2.Surface, agentToClientR, clientToAgentW, v2.Client(v2PrintClient{}), &acpsdk.SideOptions{Strict: true})
	defer client.Close()

	init, err := client.Agent().Initialize(ctx, &v2.InitializeRequest{
		ProtocolVersion: v2.LatestProtocolVersion,
		Info:            v2.Implementation{Name: "example", Version: "1.0.0"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("agent:", init.Info.Name, "protocol", init.ProtocolVersion)
	sess, err := client.Agent().NewSession(ctx, &v2.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		panic(err)
	}
	res, err := client.Agent().Prompt(ctx, &v2.PromptRequest{
		SessionID: sess.SessionID,
		Prompt:    []v2.ContentBlock{&v2.ContentBlockText{Text: "hello"}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("answered:", res.MessageID)

	// This agent's session capabilities lack delete.
	_, err = client.Agent().DeleteSession(ctx, &v2.DeleteSessionRequest{SessionID: sess.SessionID})
	fmt.Println(err)

	// Output:
	// agent: v2-echo protocol 2
	// update: echo: hello
	// answered: message-1
	// acpsdk: strict mode refused session/delete: the peer did not advertise capabilities.session.delete
}
