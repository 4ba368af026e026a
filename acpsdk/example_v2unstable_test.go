package acpsdk_test

import (
	"context"
	"fmt"
	"io"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen/v2unstable"
)

// v2ForkingAgent is an agent on the v2 draft's unstable surface that can
// fork sessions, and says so; it does not archive them.
type v2ForkingAgent struct{ forks int }

func (a *v2ForkingAgent) Initialize(ctx context.Context, p *v2unstable.InitializeRequest) (*v2unstable.InitializeResponse, error) {
	return &v2unstable.InitializeResponse{
		ProtocolVersion: v2unstable.LatestProtocolVersion,
		Info:            v2unstable.Implementation{Name: "forking-agent", Version: "1.0.0"},
		Capabilities: v2unstable.AgentCapabilities{Session: &v2unstable.SessionCapabilities{
			Fork: &v2unstable.SessionForkCapabilities{},
		}},
	}, nil
}

func (a *v2ForkingAgent) NewSession(ctx context.Context, p *v2unstable.NewSessionRequest) (*v2unstable.NewSessionResponse, error) {
	return &v2unstable.NewSessionResponse{SessionID: "session-1"}, nil
}

// ForkSession makes it a v2unstable.ForkSessionHandler.
func (a *v2ForkingAgent) ForkSession(ctx context.Context, p *v2unstable.ForkSessionRequest) (*v2unstable.ForkSessionResponse, error) {
	a.forks++
	return &v2unstable.ForkSessionResponse{SessionID: v2unstable.SessionID(fmt.Sprintf("%s-fork-%d", p.SessionID, a.forks))}, nil
}

func (a *v2ForkingAgent) Prompt(ctx context.Context, p *v2unstable.PromptRequest) (*v2unstable.PromptResponse, error) {
	return &v2unstable.PromptResponse{MessageID: "message-1"}, nil
}

func (a *v2ForkingAgent) CancelSession(ctx context.Context, p *v2unstable.CancelSessionNotification) error {
	return nil
}

// v2QuietClient is a client on the same surface that needs nothing.
type v2QuietClient struct{}

func (v2QuietClient) UpdateSession(ctx context.Context, p *v2unstable.UpdateSessionNotification) error {
	return nil
}

func (v2QuietClient) RequestPermission(ctx context.Context, p *v2unstable.RequestPermissionRequest) (*v2unstable.RequestPermissionResponse, error) {
	return nil, &acpsdk.Error{Code: acpsdk.CodeMethodNotFound, Message: "no permissions here"}
}

// The same runtime over the v2 draft with its unstable features (package
// acpkit.dev/acpsdk/gen/v2unstable): a strict client forks a session the
// agent advertised forking for, and is refused, before anything is sent,
// an archive the agent did not advertise.
func ExampleNewClientSideOf_v2unstable() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	agent := acpsdk.NewAgentSideOf(v2unstable.Surface, clientToAgentR, agentToClientW, v2unstable.Agent(&v2ForkingAgent{}), nil)
	defer agent.Close()
	client := acpsdk.NewClientSideOf(v2unstable.Surface, agentToClientR, clientToAgentW, v2unstable.Client(v2QuietClient{}), &acpsdk.SideOptions{Strict: true})
	defer client.Close()

	if _, err := client.Agent().Initialize(ctx, &v2unstable.InitializeRequest{
		ProtocolVersion: v2unstable.LatestProtocolVersion,
		Info:            v2unstable.Implementation{Name: "example", Version: "1.0.0"},
	}); err != nil {
		panic(err)
	}
	sess, err := client.Agent().NewSession(ctx, &v2unstable.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		panic(err)
	}
	fork, err := client.Agent().ForkSession(ctx, &v2unstable.ForkSessionRequest{SessionID: sess.SessionID, Cwd: "/tmp"})
	if err != nil {
		panic(err)
	}
	fmt.Println("forked:", fork.SessionID)

	_, err = client.Agent().ArchiveSession(ctx, &v2unstable.ArchiveSessionRequest{SessionID: fork.SessionID})
	fmt.Println(err)

	// Output:
	// forked: session-1-fork-1
	// acpsdk: strict mode refused session/archive: the peer did not advertise capabilities.session.archive
}
