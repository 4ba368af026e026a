package suite

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// recorder is the client side under test: it records every typed update
// and answers permission requests with the first refusing option.
type recorder struct {
	mu      sync.Mutex
	updates []*gen.SessionNotification
	perms   []*gen.RequestPermissionRequest
	first   chan struct{} // closed at the first update
	once    sync.Once
}

func newRecorder() *recorder { return &recorder{first: make(chan struct{})} }

func (r *recorder) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	r.mu.Lock()
	r.updates = append(r.updates, n)
	r.mu.Unlock()
	r.once.Do(func() { close(r.first) })
	return nil
}

func (r *recorder) RequestPermission(_ context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	r.mu.Lock()
	r.perms = append(r.perms, p)
	r.mu.Unlock()
	for _, o := range p.Options {
		if o.Kind == gen.PermissionOptionKindRejectOnce {
			return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: o.OptionID}}, nil
		}
	}
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// take returns the updates recorded so far and forgets them.
func (r *recorder) take() []*gen.SessionNotification {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.updates
	r.updates = nil
	return out
}

// session is acpsdk's client side connected to a reference agent process.
type session struct {
	t       *testing.T
	cmd     *exec.Cmd
	cs      *acpsdk.ClientSide
	conn    *acpsdk.Conn
	peer    *gen.AgentPeer
	client  *recorder
	exited  chan struct{}
	waitErr error

	mu       sync.Mutex
	sent     [][]byte // lines written, from the wire tap
	oversize int
	garbage  int
}

// connect starts the reference agent with flags and connects acpsdk's
// ClientSide (strict mode on) to it, with recorder as the client.
func connect(t *testing.T, flags ...string) *session {
	t.Helper()
	s := &session{t: t, client: newRecorder(), exited: make(chan struct{})}
	s.cmd = exec.Command(refagentBin, flags...)
	cs, err := acpsdk.StartAgent(s.cmd, s.client, &acpsdk.SideOptions{
		Strict: true,
		Options: acpsdk.Options{
			Tap: func(dir acpsdk.Direction, line []byte) {
				if dir == acpsdk.DirectionOut {
					s.mu.Lock()
					s.sent = append(s.sent, append([]byte(nil), line...))
					s.mu.Unlock()
				}
			},
			Observer: acpsdk.Observer{
				OversizeLine:   func(*acpsdk.OversizeError) { s.mu.Lock(); s.oversize++; s.mu.Unlock() },
				UnparsableLine: func([]byte) { s.mu.Lock(); s.garbage++; s.mu.Unlock() },
			},
		},
	})
	require.NoError(t, err)
	s.cs, s.conn, s.peer = cs, cs.Conn(), cs.Agent()
	go func() {
		<-cs.Done()
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.close)
	return s
}

// close ends the connection (closing the agent's stdin) and reaps the
// process, killing it if it outlives a bound.
func (s *session) close() {
	_ = s.conn.Close()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *session) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s.t.Cleanup(cancel)
	return ctx
}

func (s *session) initialize() *gen.InitializeResponse {
	s.t.Helper()
	r, err := s.peer.Initialize(s.ctx(), &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	require.NoError(s.t, err)
	return r
}

func (s *session) newSession(servers ...gen.McpServer) gen.SessionID {
	s.t.Helper()
	if servers == nil {
		servers = []gen.McpServer{}
	}
	r, err := s.peer.NewSession(s.ctx(), &gen.NewSessionRequest{Cwd: s.t.TempDir(), McpServers: servers})
	require.NoError(s.t, err)
	return r.SessionID
}

func (s *session) prompt(sid gen.SessionID, text string) (*gen.PromptResponse, error) {
	return s.peer.Prompt(s.ctx(), &gen.PromptRequest{SessionID: sid, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: text}}})
}
