package main

import (
	"fmt"
	"go/format"
)

// exampleSource is the runnable documentation of acpsdk/gen. It is part of
// the generator's output (the package holds only generated files), written
// as Go source here because it is prose-like code, not schema-driven.
const exampleSource = `package gen_test

import (
	"context"
	"errors"
	"fmt"

	"acpkit.dev/acpsdk/gen"
)

// Decode a session/update notification, switch on its variant, and
// re-encode it without losing anything.
func Example() {
	data := []byte(` + "`" + `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}},"_meta":{"trace":12345678901234567890}}` + "`" + `)
	var n gen.SessionNotification
	if err := n.UnmarshalJSON(data); err != nil {
		fmt.Println(err)
		return
	}
	switch u := n.Update.(type) {
	case *gen.SessionUpdateAgentMessageChunk:
		if text, ok := u.Content.(*gen.ContentBlockText); ok {
			fmt.Println("agent says:", text.Text)
		}
	case *gen.SessionUpdateUnknown:
		fmt.Println("a newer update, kept verbatim:", string(u.Raw))
	}
	out, err := n.MarshalJSON()
	fmt.Println(string(out) == string(data), err)
	// Output:
	// agent says: Hello
	// true <nil>
}

// An unknown variant is kept, not mistaken for a known one.
func ExampleUnmarshalContentBlock() {
	block, err := gen.UnmarshalContentBlock([]byte(` + "`" + `{"type":"video","url":"https://example.com/v.mp4"}` + "`" + `))
	if err != nil {
		fmt.Println(err)
		return
	}
	unknown := block.(*gen.ContentBlockUnknown)
	fmt.Println(string(unknown.Raw))
	// Output:
	// {"type":"video","url":"https://example.com/v.mp4"}
}

type agent struct{}

func (agent) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return &gen.InitializeResponse{ProtocolVersion: gen.LatestProtocolVersion}, nil
}

func (agent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: "s1"}, nil
}

func (agent) Prompt(context.Context, *gen.PromptRequest) (*gen.PromptResponse, error) {
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

func (agent) Cancel(context.Context, *gen.CancelNotification) error { return nil }

// Dispatch a request to an Agent implementation; bad params carry their
// JSON path, unsupported methods are ErrNotImplemented.
func ExampleDispatchAgent() {
	ctx := context.Background()
	res, err := gen.DispatchAgent(ctx, agent{}, gen.MethodSessionPrompt, []byte(` + "`" + `{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}` + "`" + `))
	fmt.Println(res.(*gen.PromptResponse).StopReason, err)

	_, err = gen.DispatchAgent(ctx, agent{}, gen.MethodSessionPrompt, []byte(` + "`" + `{"sessionId":"s1","prompt":[{"type":"text"}]}` + "`" + `))
	var de *gen.DecodeError
	fmt.Println(errors.As(err, &de), de.Path, errors.Is(err, gen.ErrMissingField))

	_, err = gen.DispatchAgent(ctx, agent{}, gen.MethodSessionLoad, []byte(` + "`" + `{}` + "`" + `))
	fmt.Println(errors.Is(err, gen.ErrNotImplemented))
	// Output:
	// end_turn <nil>
	// true params.prompt[0].text true
	// true
}
`

func (e *emitter) example() ([]byte, error) {
	src := "// " + e.header() + "\n\n" + exampleSource
	out, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("example_test.go: %w", err)
	}
	return out, nil
}
