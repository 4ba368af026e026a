package adapter_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/fakeagent"
)

// A session's life: start the runtime, run one turn while printing its
// events, stop. The runtime here is a small scripted agent from the test
// binary; in Sortie, Agent.Command names a real one, such as "gemini --acp".
func Example() {
	a, err := adapter.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	ws, err := os.MkdirTemp("", "adapter-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)

	ctx := context.Background()
	s, err := a.StartSession(ctx, adapter.StartParams{
		WorkspacePath: ws,
		Agent:         adapter.AgentConfig{Kind: adapter.KindName, Command: fakeagent.Command("hello")},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.StopSession(ctx, s)
	fmt.Println("session:", s.ID)

	res, err := a.RunTurn(ctx, s, adapter.TurnParams{
		Prompt: "Say hello",
		OnEvent: func(e adapter.Event) {
			if e.Message != "" { // empty notifications only reset stall timers
				fmt.Printf("%s: %s\n", e.Type, e.Message)
			}
		},
	})
	fmt.Println("outcome:", res.Outcome, err)
	// Output:
	// session: hello-1
	// session_started: session started
	// notification: this session started with a declared capability gap in: token counts
	// notification: Hello from the runtime.
	// turn_completed: turn completed
	// outcome: turn_completed <nil>
}
