// Command goforkagent is the Go twin of fork_agent.mjs: an ACP agent on
// acpsdk's generic agent side over the v1 unstable surface
// (acpkit.dev/acpsdk/gen/v1unstable), in strict mode, driven by the
// TypeScript SDK's unstable client (fork_client.mjs) in the interop tests.
// It advertises sessionCapabilities.fork and .title, speaks ACP over
// stdin/stdout, and exits 0 when stdin closes.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen/v1unstable"
)

const agentName = "acpkit-tsinterop-goforkagent"

func main() {
	a := &forkAgent{sessions: map[v1unstable.SessionID]*session{}, ready: make(chan struct{})}
	side := acpsdk.NewAgentSideOf(v1unstable.Surface, os.Stdin, os.Stdout, v1unstable.Agent(a), &acpsdk.SideOptions{Strict: true})
	a.client = side.Client()
	close(a.ready)
	<-side.Done()
	err := side.Err()
	_ = side.Close()
	if err != nil && !errors.Is(err, acpsdk.ErrClosed) {
		fmt.Fprintln(os.Stderr, agentName+":", err)
		os.Exit(1)
	}
}

type session struct {
	forkedFrom v1unstable.SessionID
	title      string
}

// forkAgent implements v1unstable.Agent plus the ForkSession and
// SetSessionTitle handlers.
type forkAgent struct {
	// ready is closed once client is set: a handler may run before
	// NewAgentSideOf has returned it.
	ready  chan struct{}
	client *v1unstable.ClientPeer

	mu       sync.Mutex
	next     int
	sessions map[v1unstable.SessionID]*session
}

var (
	_ v1unstable.Agent                  = (*forkAgent)(nil)
	_ v1unstable.ForkSessionHandler     = (*forkAgent)(nil)
	_ v1unstable.SetSessionTitleHandler = (*forkAgent)(nil)
)

func (a *forkAgent) Initialize(context.Context, *v1unstable.InitializeRequest) (*v1unstable.InitializeResponse, error) {
	return &v1unstable.InitializeResponse{
		ProtocolVersion: 1,
		AgentCapabilities: v1unstable.AgentCapabilities{SessionCapabilities: v1unstable.SessionCapabilities{
			Fork:  &v1unstable.SessionForkCapabilities{},
			Title: &v1unstable.SessionTitleCapabilities{},
		}},
		AgentInfo:   &v1unstable.Implementation{Name: agentName, Version: "1.0.0"},
		AuthMethods: []v1unstable.AuthMethod{},
	}, nil
}

func (a *forkAgent) newSession(from v1unstable.SessionID) v1unstable.SessionID {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	id := v1unstable.SessionID(fmt.Sprintf("sess-%d", a.next))
	a.sessions[id] = &session{forkedFrom: from}
	return id
}

// lookup finds a session or returns the protocol's -32002.
func (a *forkAgent) lookup(id v1unstable.SessionID) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, &acpsdk.Error{Code: acpsdk.CodeResourceNotFound, Message: "session not found: " + string(id)}
	}
	return s, nil
}

func (a *forkAgent) NewSession(context.Context, *v1unstable.NewSessionRequest) (*v1unstable.NewSessionResponse, error) {
	return &v1unstable.NewSessionResponse{SessionID: a.newSession("")}, nil
}

func (a *forkAgent) ForkSession(_ context.Context, p *v1unstable.ForkSessionRequest) (*v1unstable.ForkSessionResponse, error) {
	if _, err := a.lookup(p.SessionID); err != nil {
		return nil, err
	}
	return &v1unstable.ForkSessionResponse{SessionID: a.newSession(p.SessionID)}, nil
}

// SetSessionTitle stores the title and announces it with a
// session_info_update before answering, as fork_agent.mjs does.
func (a *forkAgent) SetSessionTitle(ctx context.Context, p *v1unstable.SetSessionTitleRequest) (*v1unstable.SetSessionTitleResponse, error) {
	s, err := a.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	s.title = p.Title
	a.mu.Unlock()
	<-a.ready
	title := p.Title
	err = a.client.SessionUpdate(ctx, &v1unstable.SessionNotification{
		SessionID: p.SessionID,
		Update:    &v1unstable.SessionUpdateSessionInfoUpdate{Title: &title},
	})
	if err != nil {
		return nil, err
	}
	return &v1unstable.SetSessionTitleResponse{Title: p.Title}, nil
}

func (a *forkAgent) Prompt(_ context.Context, p *v1unstable.PromptRequest) (*v1unstable.PromptResponse, error) {
	if _, err := a.lookup(p.SessionID); err != nil {
		return nil, err
	}
	return &v1unstable.PromptResponse{StopReason: v1unstable.StopReasonEndTurn}, nil
}

func (a *forkAgent) Cancel(context.Context, *v1unstable.CancelNotification) error { return nil }
