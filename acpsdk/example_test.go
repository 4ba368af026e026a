package acpsdk_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// echoAgent answers every prompt by streaming the prompt's text back.
type echoAgent struct {
	side *acpsdk.AgentSide
}

func (a *echoAgent) Initialize(ctx context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return &gen.InitializeResponse{ProtocolVersion: p.ProtocolVersion}, nil
}

func (a *echoAgent) NewSession(ctx context.Context, p *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: "session-1"}, nil
}

func (a *echoAgent) Cancel(ctx context.Context, p *gen.CancelNotification) error { return nil }

func (a *echoAgent) Prompt(ctx context.Context, p *gen.PromptRequest) (*gen.PromptResponse, error) {
	for _, block := range p.Prompt {
		if text, ok := block.(*gen.ContentBlockText); ok {
			err := a.side.Client().SessionUpdate(ctx, &gen.SessionNotification{
				SessionID: p.SessionID,
				Update: &gen.SessionUpdateAgentMessageChunk{
					Content: &gen.ContentBlockText{Text: "echo: " + text.Text},
				},
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

// printClient prints the agent's message chunks and refuses permissions.
type printClient struct{}

func (printClient) SessionUpdate(ctx context.Context, p *gen.SessionNotification) error {
	if chunk, ok := p.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
		if text, ok := chunk.Content.(*gen.ContentBlockText); ok {
			fmt.Println("update:", text.Text)
		}
	}
	return nil
}

func (printClient) RequestPermission(ctx context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// A client and an agent, both written with acpsdk, talking over a pipe
// pair. A real client would use StartAgent to run the agent as a
// subprocess; a real agent would pass os.Stdin and os.Stdout.
func Example() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	agentImpl := &echoAgent{}
	agent := acpsdk.NewAgentSide(clientToAgentR, agentToClientW, agentImpl, nil)
	agentImpl.side = agent
	defer agent.Close()

	client := acpsdk.NewClientSide(agentToClientR, clientToAgentW, printClient{}, &acpsdk.SideOptions{Strict: true})
	defer client.Close()

	init, err := client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	if err != nil {
		panic(err)
	}
	fmt.Println("protocol version:", init.ProtocolVersion)

	sess, err := client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: "/tmp", McpServers: []gen.McpServer{}})
	if err != nil {
		panic(err)
	}
	res, err := client.Agent().Prompt(ctx, &gen.PromptRequest{
		SessionID: sess.SessionID,
		Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: "hello"}},
	})
	if err != nil {
		panic(err)
	}
	// Every update sent before the answer has been handled by now.
	fmt.Println("stop reason:", res.StopReason)

	// Strict mode: this agent did not advertise loadSession, so the call
	// is refused without being sent.
	_, err = client.Agent().LoadSession(ctx, &gen.LoadSessionRequest{SessionID: sess.SessionID, Cwd: "/tmp", McpServers: []gen.McpServer{}})
	fmt.Println(err)

	// Output:
	// protocol version: 1
	// update: echo: hello
	// stop reason: end_turn
	// acpsdk: strict mode refused session/load: the peer did not advertise agentCapabilities.loadSession
}

// A raw connection: one side serves "sum", the other calls it. Conn works
// with any reader/writer pair and raw or typed params.
func ExampleConn() {
	ctx := context.Background()
	aR, aW := io.Pipe()
	bR, bW := io.Pipe()

	server := acpsdk.NewConn(aR, bW, acpsdk.HandlerFunc(func(ctx context.Context, req *acpsdk.Request) (any, error) {
		if req.Method != "sum" {
			return nil, acpsdk.ErrMethodNotFound
		}
		var nums []int
		if err := json.Unmarshal(req.Params, &nums); err != nil {
			return nil, &acpsdk.Error{Code: acpsdk.CodeInvalidParams, Message: err.Error()}
		}
		total := 0
		for _, n := range nums {
			total += n
		}
		return total, nil
	}), nil)
	defer server.Close()

	var (
		mu    sync.Mutex
		lines []string
	)
	client := acpsdk.NewConn(bR, aW, nil, &acpsdk.Options{
		// The tap sees every line read or written (acpcheck records transcripts with it).
		Tap: func(dir acpsdk.Direction, line []byte) {
			mu.Lock()
			lines = append(lines, dir.String()+" "+string(line))
			mu.Unlock()
		},
	})
	defer client.Close()

	var total int
	if err := client.Call(ctx, "sum", []int{1, 2, 3}, &total); err != nil {
		panic(err)
	}
	fmt.Println("total:", total)
	err := client.Call(ctx, "product", []int{2}, nil)
	fmt.Println(err)
	mu.Lock()
	fmt.Println(strings.Join(lines, "\n"))
	mu.Unlock()

	// Output:
	// total: 6
	// jsonrpc error -32601: method not found
	// out {"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,3]}
	// in {"jsonrpc":"2.0","id":1,"result":6}
	// out {"jsonrpc":"2.0","id":2,"method":"product","params":[2]}
	// in {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found"}}
}

// An ordered consumer: everything the agent writes reaches one function in
// the order it was read, so a client can decide each item knowing what came
// before it (here: the updates before the prompt's answer). Params decode
// into their generated types straight from the line the connection
// validated; a request is answered through its Reply, now or later.
func ExampleNewOrderedConn() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	agentImpl := &echoAgent{}
	agent := acpsdk.NewAgentSide(clientToAgentR, agentToClientW, agentImpl, nil)
	agentImpl.side = agent
	defer agent.Close()

	answered := make(chan struct{})
	client := acpsdk.NewOrderedConn(agentToClientR, clientToAgentW, func(ctx context.Context, in *acpsdk.Inbound) {
		switch in.Kind {
		case acpsdk.InboundNotification:
			var n gen.SessionNotification
			if err := in.Request.DecodeParams(&n); err != nil {
				fmt.Println("bad update:", err)
				return
			}
			if chunk, ok := n.Update.(*gen.SessionUpdateAgentMessageChunk); ok {
				fmt.Println("update:", chunk.Content.(*gen.ContentBlockText).Text)
			}
		case acpsdk.InboundRequest:
			in.Reply.Answer(nil, acpsdk.ErrMethodNotFound)
		case acpsdk.InboundResponse:
			if in.Call != nil && in.Call.Method() == gen.MethodSessionPrompt {
				var res gen.PromptResponse
				if err := in.Result(&res); err == nil {
					fmt.Println("stop reason:", res.StopReason)
				}
				close(answered)
			}
		}
	}, nil)
	defer client.Close()

	if err := client.Call(ctx, gen.MethodInitialize, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion}, nil); err != nil {
		panic(err)
	}
	var sess gen.NewSessionResponse
	if err := client.Call(ctx, gen.MethodSessionNew, &gen.NewSessionRequest{Cwd: "/tmp", McpServers: []gen.McpServer{}}, &sess); err != nil {
		panic(err)
	}
	// The answer is taken from the sequence, after the updates before it.
	if _, err := client.Go(ctx, gen.MethodSessionPrompt, &gen.PromptRequest{
		SessionID: sess.SessionID,
		Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: "hello"}},
	}); err != nil {
		panic(err)
	}
	<-answered

	// Output:
	// update: echo: hello
	// stop reason: end_turn
}

// Run an agent as a subprocess: StartAgent starts the command with pipes
// on its stdin and stdout and returns the client end. A real client names
// the runtime, such as exec.Command("gemini", "--acp"); here the agent is
// this test binary, which serves a minimal agent when ACPSDK_TEST_AS_AGENT
// is set (see TestMain). Close ends the session by closing the pipes; Wait
// then reaps the agent.
func ExampleStartAgent() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "ACPSDK_TEST_AS_AGENT=1")
	cmd.Stderr = os.Stderr

	client, err := acpsdk.StartAgent(cmd, printClient{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	init, err := client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: gen.LatestProtocolVersion})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agent:", init.AgentInfo.Name)
	sess, err := client.Agent().NewSession(ctx, &gen.NewSessionRequest{Cwd: os.TempDir(), McpServers: []gen.McpServer{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("session:", sess.SessionID)

	_ = client.Close()
	if err := cmd.Wait(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// agent: subprocess
	// session: m1
}
