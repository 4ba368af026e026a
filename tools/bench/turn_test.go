package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter"
)

// chunkRuntimeArg makes this test binary the runtime of BenchmarkChunkTurn
// (TestMain): it answers initialize and session/new, and every prompt with
// chunkStream(notificationCount) followed by end_turn.
const chunkRuntimeArg = "acpkit-bench-chunk-runtime"

// chunkSession is the session id of chunkStream's updates.
const chunkSession = "sess_7f3a9c2e41b8"

// chunkRuntime is the runtime's loop; it ends when its stdin does.
func chunkRuntime(in io.Reader, out io.Writer) int {
	stream := chunkStream(notificationCount)
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	reply := func(id json.RawMessage, result string) {
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(id)
		w.WriteString(`,"result":` + result + "}\n")
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // session/cancel and the like
		}
		switch m.Method {
		case gen.MethodInitialize:
			reply(m.ID, `{"protocolVersion":1,"agentCapabilities":{}}`)
		case gen.MethodSessionNew:
			reply(m.ID, `{"sessionId":"`+chunkSession+`"}`)
		case gen.MethodSessionPrompt:
			w.Write(stream)
			reply(m.ID, `{"stopReason":"end_turn"}`)
		default:
			w.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}` + "\n")
		}
		if w.Flush() != nil {
			return 1
		}
	}
}

// BenchmarkChunkTurn measures one turn of 100k agent_message_chunk updates
// from a runtime process over its pipes (issue #23): through the adapter
// (RunTurn, each event counted in OnEvent) and through acpsdk's ClientSide
// (each update counted in SessionUpdate), the session started outside the
// timer. The adapter reports its events per turn and the allocations per
// event of the whole process (the runtime is another process).
func BenchmarkChunkTurn(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("adapter", func(b *testing.B) {
		a, err := adapter.New(nil)
		if err != nil {
			b.Fatal(err)
		}
		s, err := a.StartSession(ctx, adapter.StartParams{
			WorkspacePath: b.TempDir(),
			Agent:         adapter.AgentConfig{Kind: adapter.KindName, Command: exe + " " + chunkRuntimeArg},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = a.StopSession(ctx, s) }()
		var events, chunks int64
		onEvent := func(e adapter.Event) {
			events++
			if e.Type == adapter.EventNotification && e.Message != "" {
				chunks++
			}
		}
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if _, err := a.RunTurn(ctx, s, adapter.TurnParams{Prompt: "go", OnEvent: onEvent}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if chunks == 0 {
			b.Fatal("no chunk reached OnEvent")
		}
		b.ReportMetric(float64(events)/float64(b.N), "events/op")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(events), "allocs/event")
	})
	b.Run("clientside", func(b *testing.B) {
		cmd := exec.Command(exe, chunkRuntimeArg)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cc := &turnCounter{}
		conn := acpsdk.NewClientSide(stdout, stdin, cc, nil)
		defer func() {
			_ = conn.Close()
			_ = cmd.Wait()
		}()
		agent := conn.Agent()
		if _, err := agent.Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1}); err != nil {
			b.Fatal(err)
		}
		if _, err := agent.NewSession(ctx, &gen.NewSessionRequest{Cwd: b.TempDir(), McpServers: []gen.McpServer{}}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			cc.n = 0
			if _, err := agent.Prompt(ctx, &gen.PromptRequest{SessionID: chunkSession, Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "go"}}}); err != nil {
				b.Fatal(err)
			}
			if cc.n != notificationCount {
				b.Fatalf("%d updates before the answer, want %d", cc.n, notificationCount)
			}
		}
	})
}

// turnCounter counts the chunks of a turn; the handler runs one
// notification at a time, before the prompt's answer completes (SDK-7).
type turnCounter struct{ n int }

func (c *turnCounter) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	if oursChunkText(n) != "" {
		c.n++
	}
	return nil
}

func (*turnCounter) RequestPermission(context.Context, *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}
