package acpnet_test

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/acpsdk/gen"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runFlow drives the whole flow every transport must carry: initialize,
// session/new, a prompt whose updates stream back in order before its
// answer (SDK-7), and one whose permission request the client answers.
func runFlow(t *testing.T, url string) {
	t.Helper()
	ctx := testCtx(t)
	client := &recordingClient{}
	side := dialClient(t, url, client)

	init, err := side.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	require.NoError(t, err)
	require.NotNil(t, init.AgentInfo)
	assert.Equal(t, "acpnet-test-agent", init.AgentInfo.Name)

	sess, err := side.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/", McpServers: []gen.McpServer{}})
	require.NoError(t, err)

	prompt := func(text string) {
		t.Helper()
		res, err := side.Agent().Prompt(ctx, &gen.PromptRequest{
			SessionID: sess.SessionID,
			Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: text}},
		})
		require.NoError(t, err)
		assert.Equal(t, gen.StopReasonEndTurn, res.StopReason)
	}
	prompt("hello over the network")
	want := []string{}
	for _, w := range strings.Fields("hello over the network") {
		want = append(want, string(sess.SessionID)+": "+w)
	}
	assert.Equal(t, want, client.take())

	prompt("ask permission")
	s := string(sess.SessionID) + ": "
	assert.Equal(t, []string{s + "ask", s + "permission", s + "permission: allow"}, client.take())
	assert.Equal(t, 1, client.perms)

	require.NoError(t, side.Close())
}

func TestTR2_FlowOverHTTP(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	runFlow(t, url)
}

func TestTR13_FlowOverWebSocket(t *testing.T) {
	_, url := serve(t, newTestAgent, nil)
	runFlow(t, "ws"+strings.TrimPrefix(url, "http"))
}

func TestTR16_FlowOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := acpnet.NewTCPServer(newTestAgent, nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	runFlow(t, "tcp://"+ln.Addr().String())
	require.NoError(t, srv.Close())
	require.NoError(t, <-served)
}
