package refagent

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
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

func TestServe_ReturnsAfterCancellingARunningTurn(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"slow"}]}}`,
	}, "\n")
	var out bytes.Buffer // the agent serialises its writes
	err := Serve(context.Background(), DefaultOptions(), strings.NewReader(in), &out, slog.New(slog.DiscardHandler), func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"stopReason":"cancelled"`) {
		t.Fatalf("end of input should cancel the running turn; got:\n%s", out.String())
	}
}

func ExampleServe() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	opts := DefaultOptions()
	opts.Resume = true
	if err := Serve(context.Background(), opts, in, os.Stdout, slog.New(slog.DiscardHandler), os.Exit); err != nil {
		panic(err)
	}
	// Output:
	// {"id":1,"jsonrpc":"2.0","result":{"agentCapabilities":{"loadSession":false,"mcpCapabilities":{"http":false,"sse":false},"promptCapabilities":{"audio":false,"embeddedContext":false,"image":false},"sessionCapabilities":{"resume":{}}},"agentInfo":{"name":"acpkit-refagent","version":"1.0.0"},"authMethods":[],"protocolVersion":1}}
}
