package gentest

import (
	"context"
	"sort"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

type fakeClient struct {
	updates []*gen.SessionNotification
}

func (c *fakeClient) SessionUpdate(_ context.Context, p *gen.SessionNotification) error {
	c.updates = append(c.updates, p)
	return nil
}

func (c *fakeClient) RequestPermission(_ context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: p.Options[0].OptionID}}, nil
}

// readingClient adds an optional handler.
type readingClient struct{ fakeClient }

func (c *readingClient) ReadTextFile(_ context.Context, p *gen.ReadTextFileRequest) (*gen.ReadTextFileResponse, error) {
	return &gen.ReadTextFileResponse{Content: "contents of " + p.Path}, nil
}

type fakeAgent struct{ cancelled []gen.SessionID }

func (a *fakeAgent) Initialize(_ context.Context, p *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	return &gen.InitializeResponse{ProtocolVersion: p.ProtocolVersion}, nil
}

func (a *fakeAgent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	return &gen.NewSessionResponse{SessionID: "s1"}, nil
}

func (a *fakeAgent) Prompt(context.Context, *gen.PromptRequest) (*gen.PromptResponse, error) {
	return &gen.PromptResponse{StopReason: gen.StopReasonEndTurn}, nil
}

func (a *fakeAgent) Cancel(_ context.Context, p *gen.CancelNotification) error {
	a.cancelled = append(a.cancelled, p.SessionID)
	return nil
}

// TestSDK6_DispatchClient: required and optional handlers, notifications
// return nil, unknown or unimplemented methods are ErrNotImplemented.
func TestSDK6_DispatchClient(t *testing.T) {
	ctx := context.Background()
	c := &fakeClient{}
	res, err := gen.DispatchClient(ctx, c, gen.MethodSessionUpdate, []byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`))
	require.NoError(t, err)
	require.Nil(t, res)
	require.Len(t, c.updates, 1)

	res, err = gen.DispatchClient(ctx, c, gen.MethodSessionRequestPermission, []byte(`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"o1","name":"Allow","kind":"allow_once"}]}`))
	require.NoError(t, err)
	out, err := json.Marshal(res)
	require.NoError(t, err)
	require.Equal(t, `{"outcome":{"outcome":"selected","optionId":"o1"}}`, string(out))

	_, err = gen.DispatchClient(ctx, c, gen.MethodFsReadTextFile, []byte(`{"sessionId":"s","path":"/f"}`))
	require.ErrorIs(t, err, gen.ErrNotImplemented)
	res, err = gen.DispatchClient(ctx, &readingClient{}, gen.MethodFsReadTextFile, []byte(`{"sessionId":"s","path":"/f"}`))
	require.NoError(t, err)
	require.Equal(t, "contents of /f", res.(*gen.ReadTextFileResponse).Content)

	_, err = gen.DispatchClient(ctx, c, "_vendor/thing", nil)
	require.ErrorIs(t, err, gen.ErrNotImplemented)
	// An agent-side method is not the client's.
	_, err = gen.DispatchClient(ctx, c, gen.MethodSessionPrompt, []byte(`{}`))
	require.ErrorIs(t, err, gen.ErrNotImplemented)
}

// TestSDK6_DispatchAgent: params absent or null decode as {} (so required
// members are named), notifications dispatch.
func TestSDK6_DispatchAgent(t *testing.T) {
	ctx := context.Background()
	a := &fakeAgent{}
	res, err := gen.DispatchAgent(ctx, a, gen.MethodInitialize, []byte(`{"protocolVersion":1}`))
	require.NoError(t, err)
	require.Equal(t, gen.ProtocolVersion(1), res.(*gen.InitializeResponse).ProtocolVersion)

	_, err = gen.DispatchAgent(ctx, a, gen.MethodInitialize, nil)
	requirePath(t, err, "params.protocolVersion", gen.ErrMissingField)
	_, err = gen.DispatchAgent(ctx, a, gen.MethodInitialize, []byte("null"))
	requirePath(t, err, "params.protocolVersion", gen.ErrMissingField)
	_, err = gen.DispatchAgent(ctx, a, gen.MethodInitialize, []byte("{"))
	requirePath(t, err, "params", gen.ErrSyntax)

	res, err = gen.DispatchAgent(ctx, a, gen.MethodSessionCancel, []byte(`{"sessionId":"s9"}`))
	require.NoError(t, err)
	require.Nil(t, res)
	require.Equal(t, []gen.SessionID{"s9"}, a.cancelled)

	_, err = gen.DispatchAgent(ctx, a, gen.MethodSessionLoad, []byte(`{}`))
	require.ErrorIs(t, err, gen.ErrNotImplemented)
	// $/cancel_request belongs to the connection, not to these dispatchers.
	_, err = gen.DispatchAgent(ctx, a, gen.MethodCancelRequest, []byte(`{"requestId":1}`))
	require.ErrorIs(t, err, gen.ErrNotImplemented)
}

// recorder is a fake Caller.
type recorder struct {
	method string
	params any
	result string
}

func (r *recorder) Call(_ context.Context, method string, params, result any) error {
	r.method, r.params = method, params
	return json.Unmarshal([]byte(r.result), result)
}

func (r *recorder) Notify(_ context.Context, method string, params any) error {
	r.method, r.params = method, params
	return nil
}

// TestSDK6_TypedPeers: the typed calls send the right method and decode
// the result type.
func TestSDK6_TypedPeers(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{result: `{"stopReason":"cancelled"}`}
	agent := gen.NewAgentPeer(rec)
	res, err := agent.Prompt(ctx, &gen.PromptRequest{SessionID: "s", Prompt: []gen.ContentBlock{&gen.ContentBlockText{Text: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, gen.StopReasonCancelled, res.StopReason)
	require.Equal(t, "session/prompt", rec.method)
	b, err := json.Marshal(rec.params)
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`, string(b))

	require.NoError(t, agent.Cancel(ctx, &gen.CancelNotification{SessionID: "s"}))
	require.Equal(t, "session/cancel", rec.method)

	rec.result = `{"content":"x"}`
	client := gen.NewClientPeer(rec)
	rr, err := client.ReadTextFile(ctx, &gen.ReadTextFileRequest{SessionID: "s", Path: "/p"})
	require.NoError(t, err)
	require.Equal(t, "x", rr.Content)
	require.Equal(t, "fs/read_text_file", rec.method)

	rec.result = `{"stopReason":"bogus"}`
	_, err = agent.Prompt(ctx, &gen.PromptRequest{SessionID: "s", Prompt: []gen.ContentBlock{}})
	require.ErrorIs(t, err, gen.ErrInvalidValue)
}

// TestSDK1_MethodTable: generated from x-method/x-side; sorted; lookups.
func TestSDK1_MethodTable(t *testing.T) {
	require.True(t, sort.SliceIsSorted(gen.Methods, func(i, j int) bool { return gen.Methods[i].Name < gen.Methods[j].Name }))
	defs := 0
	sides := map[gen.Side]int{}
	for _, m := range gen.Methods {
		defs++ // params
		if !m.Notification {
			defs++ // result
			require.NotNil(t, m.NewResult, m.Name)
		} else {
			require.Nil(t, m.NewResult, m.Name)
		}
		sides[m.Side]++
		got, ok := gen.LookupMethod(m.Name)
		require.True(t, ok)
		require.Equal(t, m.Name, got.Name)
	}
	pin := readPinned(t)
	require.Equal(t, pin.MethodDefs, defs, "every def %s annotates with x-method is in the table", pin.File)
	want := map[gen.Side]int{}
	for side, n := range pin.Sides {
		want[gen.Side(side)] = n
	}
	require.Equal(t, want, sides)
	m, ok := gen.LookupMethod("session/prompt")
	require.True(t, ok)
	require.IsType(t, &gen.PromptRequest{}, m.NewParams())
	require.IsType(t, &gen.PromptResponse{}, m.NewResult())
	m, ok = gen.LookupMethod("$/cancel_request")
	require.True(t, ok)
	require.Equal(t, gen.SideProtocol, m.Side)
	require.True(t, m.Notification)
	_, ok = gen.LookupMethod("session/nope")
	require.False(t, ok)
}
