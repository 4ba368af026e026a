package acpsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// seenReq is what a middleware saw of one inbound message.
type seenReq struct {
	method string
	id     string // "" for a notification
	params string
	result any // what next returned, when it was called
	err    error
}

// newMiddlewarePair connects a ClientSide and an AgentSide (fake
// implementations) whose options carry the given middlewares (nil: none).
func newMiddlewarePair(t *testing.T, clientMW, agentMW Middleware) *sidePair {
	t.Helper()
	p := &sidePair{fc: newFakeClient(t), fa: newFakeAgent(t)}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	p.agent = NewAgentSide(c2aR, a2cW, p.fa, &SideOptions{Options: Options{Tap: p.agentTx.tap}, Middleware: agentMW})
	p.fa.side = p.agent
	p.client = NewClientSide(a2cR, c2aW, p.fc, &SideOptions{Options: Options{Tap: p.clientTx.tap}, Middleware: clientMW})
	t.Cleanup(func() {
		require.NoError(t, p.client.Close())
		require.NoError(t, p.agent.Close())
	})
	return p
}

// TestSDK6_MiddlewareSeesRawIDAndParams: the middleware sees each request's
// id and raw params and each notification without id, and next runs the
// typed dispatch.
func TestSDK6_MiddlewareSeesRawIDAndParams(t *testing.T) {
	seen := make(chan seenReq, 8)
	mw := func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		res, err := next(ctx, req)
		seen <- seenReq{method: req.Method, id: string(req.ID), params: string(req.Params), result: res, err: err}
		return res, err
	}
	p := newMiddlewarePair(t, nil, mw)
	ctx := t.Context()

	params := `{"cwd":"/w","mcpServers":[]}`
	var raw json.RawMessage
	require.NoError(t, p.client.Call(ctx, gen.MethodSessionNew, json.RawMessage(params), &raw))
	require.JSONEq(t, canned[gen.MethodSessionNew], string(raw))
	s := await(t, seen)
	require.Equal(t, gen.MethodSessionNew, s.method)
	require.JSONEq(t, params, s.params)
	require.NoError(t, s.err)
	_, ok := s.result.(*gen.NewSessionResponse)
	require.True(t, ok, "next returned %T, want the typed result", s.result)
	// The id is the one the client put on the wire.
	var sent struct{ ID json.RawMessage }
	lines := p.clientTx.take()
	require.Len(t, lines, 1)
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &sent))
	require.NotEmpty(t, s.id)
	require.Equal(t, string(sent.ID), s.id)

	require.NoError(t, p.client.Agent().Cancel(ctx, &gen.CancelNotification{SessionID: "s1"}))
	s = await(t, seen)
	require.Equal(t, gen.MethodSessionCancel, s.method)
	require.Empty(t, s.id)
	require.JSONEq(t, `{"sessionId":"s1"}`, s.params)
	require.Equal(t, "s1", await(t, p.fa.cancelled), "next reached the typed Cancel")
}

// TestSDK6_MiddlewareAnswersRaw: a raw result goes out byte for byte, even
// one the typed layer could not produce, and the implementation is not
// called.
func TestSDK6_MiddlewareAnswersRaw(t *testing.T) {
	const malformed = `{"protocolVersion":1,"agentCapabilities":{"loadSession":"yes"}}`
	mw := func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		if req.Method == gen.MethodSessionNew {
			return json.RawMessage(malformed), nil
		}
		return next(ctx, req)
	}
	p := newMiddlewarePair(t, nil, mw)
	ctx := t.Context()
	var raw json.RawMessage
	require.NoError(t, p.client.Call(ctx, gen.MethodSessionNew, map[string]any{"cwd": "/", "mcpServers": []any{}}, &raw))
	require.Equal(t, malformed, string(raw))
	lines := p.agentTx.take()
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], `"result":`+malformed)
	// Other methods still reach the implementation.
	var init json.RawMessage
	require.NoError(t, p.client.Call(ctx, gen.MethodInitialize, map[string]any{"protocolVersion": 1}, &init))
	require.JSONEq(t, canned[gen.MethodInitialize], string(init))
}

// TestSDK6_MiddlewareAnswersErrors: the middleware can refuse before params
// are decoded with a code of its choosing, and can rewrite the error next
// returned.
func TestSDK6_MiddlewareAnswersErrors(t *testing.T) {
	const custom = -32099
	mw := func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		if req.Method == gen.MethodSessionLoad {
			return nil, &Error{Code: CodeMethodNotFound, Message: "not offered"}
		}
		res, err := next(ctx, req)
		if errors.Is(err, ErrMethodNotFound) {
			return nil, &Error{Code: custom, Message: "unknown: " + req.Method}
		}
		return res, err
	}
	p := newMiddlewarePair(t, nil, mw)
	ctx := t.Context()

	// Params that would not decode: the middleware's answer wins, not -32602.
	err := p.client.Call(ctx, gen.MethodSessionLoad, json.RawMessage(`{"sessionId":7}`), nil)
	e, ok := errors.AsType[*Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, CodeMethodNotFound, e.Code)
	require.Equal(t, "not offered", e.Message)

	err = p.client.Call(ctx, "vendor/unknown", map[string]any{}, nil)
	e, ok = errors.AsType[*Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, int64(custom), e.Code)
	require.Equal(t, "unknown: vendor/unknown", e.Message)

	// next keeps its mapping of bad params to -32602 with the path.
	err = p.client.Call(ctx, gen.MethodSessionPrompt, json.RawMessage(`{"prompt":[]}`), nil)
	e, ok = errors.AsType[*Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, CodeInvalidParams, e.Code)
}

// TestSDK10_MiddlewareReplacedParamsAreValidated: params a middleware
// passes to next in place of the ones read are dispatched if they are JSON
// and answered -32602 if they are not (the dispatch trusts only params
// that came out of a validated line).
func TestSDK10_MiddlewareReplacedParamsAreValidated(t *testing.T) {
	mw := func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		r := *req
		switch req.Method {
		case "_fake/note":
			r.Params = json.RawMessage(`{"replaced":true}`)
		case gen.MethodSessionNew:
			// Not JSON, in a member the typed decoder would skip.
			r.Params = json.RawMessage(`{"cwd":"/w","mcpServers":[],"x":tru}`)
		}
		return next(ctx, &r)
	}
	p := newMiddlewarePair(t, nil, mw)
	ctx := t.Context()
	require.NoError(t, p.client.Notify(ctx, "_fake/note", map[string]any{"replaced": false}))
	require.JSONEq(t, `{"replaced":true}`, await(t, p.fa.ext))

	err := p.client.Call(ctx, gen.MethodSessionNew, map[string]any{"cwd": "/w", "mcpServers": []any{}}, nil)
	e, ok := errors.AsType[*Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, CodeInvalidParams, e.Code, e.Message)
}

// TestSDK7_MiddlewareKeepsOrdering: with a middleware on the client side,
// a prompt still returns only after the update the agent sent before its
// answer was handled, and the client side's middleware sees the agent's
// calls in the order they were made.
func TestSDK7_MiddlewareKeepsOrdering(t *testing.T) {
	seen := make(chan string, 8)
	mw := func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		seen <- req.Method
		return next(ctx, req)
	}
	p := newMiddlewarePair(t, mw, nil)
	var req gen.PromptRequest
	require.NoError(t, json.Unmarshal([]byte(`{"sessionId":"s1","prompt":[{"type":"text","text":"Hello"}]}`), &req))
	res, err := p.client.Agent().Prompt(t.Context(), &req)
	require.NoError(t, err)
	require.Equal(t, gen.StopReasonEndTurn, res.StopReason)
	select {
	case u := <-p.fc.updates:
		require.Equal(t, gen.SessionID("s1"), u.SessionID)
	default:
		t.Fatal("prompt answered before its update was handled")
	}
	require.Equal(t, gen.MethodSessionUpdate, await(t, seen))
	require.Equal(t, gen.MethodSessionRequestPermission, await(t, seen))
}

// A middleware on an agent side answering what its typed implementation
// (here minimalAgent, which has no extension handler) cannot: a raw result
// for one extension method, and a vendor error code instead of -32601 for
// any other method the implementation lacks.
func ExampleMiddleware() {
	ctx := context.Background()
	clientToAgentR, clientToAgentW := io.Pipe()
	agentToClientR, agentToClientW := io.Pipe()

	agent := NewAgentSide(clientToAgentR, agentToClientW, &minimalAgent{init: `{"protocolVersion":1}`}, &SideOptions{
		Middleware: func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
			if req.Method == "_acme/version" {
				return json.RawMessage(`{"version":"1.2.3"}`), nil
			}
			res, err := next(ctx, req)
			if errors.Is(err, ErrMethodNotFound) {
				return nil, &Error{Code: -32099, Message: "acme: no such method " + req.Method}
			}
			return res, err
		},
	})
	defer agent.Close()
	client := NewClientSide(agentToClientR, clientToAgentW, &minimalClient{}, nil)
	defer client.Close()

	var version json.RawMessage
	if err := client.Call(ctx, "_acme/version", struct{}{}, &version); err != nil {
		panic(err)
	}
	fmt.Println(string(version))
	fmt.Println(client.Call(ctx, "_acme/other", struct{}{}, nil))

	// Output:
	// {"version":"1.2.3"}
	// jsonrpc error -32099: acme: no such method _acme/other
}
