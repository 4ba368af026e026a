package refagent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
)

// FuzzServe: any input ends Serve without a panic or a hang.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"full permission slow elicit"}]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess-1"}}`,
		`{"id":1,"result":{}}`, `[]`, `{`, "\n\n", `{"id":"x","method":"session/load","params":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		o := DefaultOptions()
		o.LoadSession, o.Resume, o.Close, o.Delete = true, true, true, true
		err := Serve(context.Background(), o, bytes.NewReader(in), io.Discard, slog.New(slog.DiscardHandler), func(int) {})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestServe_ReturnsWhileATurnIsRunning(t *testing.T) {
	c := startAgent(t, DefaultOptions())
	sid := c.handshake()
	c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "slow"}}})
	first, ok := c.next()
	if !ok || first.kind() != "agent_message_chunk" {
		t.Fatalf("turn did not start: %+v", first)
	}
	c.close() // fails the test unless Serve returns, the slow turn ended
}

func ExampleServe() {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts := DefaultOptions()
	opts.Resume = true
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), opts, inR, outW, slog.New(slog.DiscardHandler), os.Exit) }()

	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	line, _ := bufio.NewReader(outR).ReadString('\n')
	fmt.Print(line)
	_ = inW.Close() // end of input: Serve returns
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"resume":{}},"auth":{}},"authMethods":[],"agentInfo":{"name":"acpkit-refagent","version":"1.0.0"}}}
}
