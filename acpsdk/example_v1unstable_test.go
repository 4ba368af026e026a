package acpsdk_test

import (
	"context"
	"fmt"
	"io"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen/v1unstable"
)

// forkingAgent is an agent on the v1 unstable surface that forks sessions
// and takes titles.
type forkingAgent struct{ forks int }

func (a *forkingAgent) Initialize(ctx context.Context, p *v1unstable.InitializeRequest) (*v1unstable.InitializeResponse, error) {
	return &v1unstable.InitializeResponse{
		ProtocolVersion: p.ProtocolVersion,
		AgentCapabilities: v1unstable.AgentCapabilities{SessionCapabilities: v1unstable.SessionCapabilities{
			Fork:  &v1unstable.SessionForkCapabilities{},
			Title: &v1unstable.SessionTitleCapabilities{},
		}},
	}, nil
}

func (a *forkingAgent) NewSession(ctx context.Context, p *v1unstable.NewSessionRequest) (*v1unstable.NewSessionResponse, error) {
	return &v1unstable.NewSessionResponse{SessionID: "session-1"}, nil
}

func (a *forkingAgent) ForkSession(ctx context.Context, p *v1unstable.ForkSessionRequest) (*v1unstable.ForkSessionResponse, error) {
	a.forks++
	return &v1unstable.ForkSessionResponse{SessionID: v1unstable.SessionID(fmt.Sprintf("%s-fork-%d", p.SessionID, a.forks))}, nil
}

func (a *forkingAgent) SetSessionTitle(ctx context.Context, p *v1unstable.SetSessionTitleRequest) (*v1unstable.SetSessionTitleResponse, error) {
	fmt.Printf("agent: %s is now %q\n", p.SessionID, p.Title)
	return &v1unstable.SetSessionTitleResponse{Title: p.Title}, nil
}

func (a *forkingAgent) Prompt(ctx context.Context, p *v1unstable.PromptRequest) (*v1unstable.PromptResponse, error) {
	return &v1unstable.PromptResponse{StopReason: v1unstable.StopReasonEndTurn}, nil
}

func (a *forkingAgent) Cancel(ctx context.Context, p *v1unstable.CancelNotification) error {
	return nil
}

// quietClient is a client on the v1 unstable surface that ignores updates.
type quietClient struct{}

func (quietClient) SessionUpdate(ctx context.Context, p *v1unstable.SessionNotification) error {
	return nil
}

func (quietClient) RequestPermission(ctx context.Context, p *v1unstable.RequestPermissionRequest) (*v1unstable.RequestPermissionResponse, error) {
	return &v1unstable.RequestPermissionResponse{Outcome: &v1unstable.RequestPermissionOutcomeCancelled{}}, nil
}

// The same runtime over the v1 unstable surface (package
// acpkit.dev/acpsdk/gen/v1unstable): a client forks a session and titles
// the fork, an agent handles both, and strict mode gates by what this
// surface's capabilities say.
func ExampleNewClientSideOf_v1unstable() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	// The implementations are passed as the surface's interfaces: Go does
	// not infer the surface from a concrete type.
	agent := acpsdk.NewAgentSideOf(v1unstable.Surface, clientToAgentR, agentToClientW, v1unstable.Agent(&forkingAgent{}), nil)
	defer agent.Close()
	client := acpsdk.NewClientSideOf(v1unstable.Surface, agentToClientR, clientToAgentW, v1unstable.Client(quietClient{}), &acpsdk.SideOptions{Strict: true})
	defer client.Close()

	// client.Agent() is a *v1unstable.AgentPeer.
	if _, err := client.Agent().Initialize(ctx, &v1unstable.InitializeRequest{ProtocolVersion: 1}); err != nil {
		panic(err)
	}
	sess, err := client.Agent().NewSession(ctx, &v1unstable.NewSessionRequest{Cwd: "/tmp", McpServers: []v1unstable.McpServer{}})
	if err != nil {
		panic(err)
	}
	fork, err := client.Agent().ForkSession(ctx, &v1unstable.ForkSessionRequest{SessionID: sess.SessionID, Cwd: "/tmp"})
	if err != nil {
		panic(err)
	}
	fmt.Println("client: forked", fork.SessionID)
	if _, err := client.Agent().SetSessionTitle(ctx, &v1unstable.SetSessionTitleRequest{SessionID: fork.SessionID, Title: "a summary"}); err != nil {
		panic(err)
	}

	// The agent advertised fork and title, not status: strict mode refuses
	// session/status without sending it.
	_, err = client.Agent().SessionStatus(ctx, &v1unstable.SessionStatusRequest{SessionID: fork.SessionID})
	fmt.Println(err)

	// Output:
	// client: forked session-1-fork-1
	// agent: session-1-fork-1 is now "a summary"
	// acpsdk: strict mode refused session/status: the peer did not advertise agentCapabilities.sessionCapabilities.status
}
