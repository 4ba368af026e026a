package adapter_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"acpkit.dev/adapter"
)

// A session's life: start the runtime, run one turn while printing its
// events, stop. Agent.Command is the runtime's command line; in Sortie it
// names a real one, such as "gemini --acp". Here it is this example's own
// binary, which runs acpkit's reference agent when its first argument is
// "refagent" (as `acprun refagent` does), so the example needs nothing
// installed.
func Example() {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
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
		Agent:         adapter.AgentConfig{Kind: adapter.KindName, Command: exe + " refagent"},
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
	// session: sess-1
	// session_started: session started
	// notification: this session started with a declared capability gap in: token counts, session continuation
	// notification: Hello, from the reference agent.
	// notification: You said: Say hello
	// turn_completed: turn completed
	// outcome: turn_completed <nil>
}
