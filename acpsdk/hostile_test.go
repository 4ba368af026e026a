package acpsdk

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/acpsdk/internal/jsonx"
)

// Input a hostile or sloppy peer sends (issue #9): none of it may crash,
// hang or mis-answer the connection, and the connection, the dispatch and
// the generated decoders give one answer for each.

// nested returns n levels of arrays around 1.
func nested(n int) string {
	return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
}

// TestSDK10_DeepLineIsParseErrorNotFatal: a line of two million '[' (well
// under the line bound) is answered -32700 and the connection goes on; it
// used to overflow the validator's stack and kill the process.
func TestSDK10_DeepLineIsParseErrorNotFatal(t *testing.T) {
	c, p := newRawPeer(t, echoHandler, nil)
	p.send(strings.Repeat("[", 2_000_000))
	m := p.recvMsg()
	require.Contains(t, string(m["error"]), `-32700`)
	require.Equal(t, "null", string(m["id"]))
	p.sync("1")
	require.Nil(t, c.Err())
}

// TestSDK10_DeepMetaInNotificationIsReported: a session/update whose _meta
// nests three million deep reaches a ClientSide; it is reported as failed
// and the connection goes on.
func TestSDK10_DeepMetaInNotificationIsReported(t *testing.T) {
	var rec recorder
	c, p := newRawClientSide(t, &minimalClient{}, &SideOptions{Options: Options{Observer: rec.observer()}})
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}},"_meta":{"a":` + nested(3_000_000) + `}}}`)
	// A request the minimal client lacks proves the line was dealt with.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`)
	m := p.recvMsg()
	require.Equal(t, "1", string(m["id"]))
	require.Contains(t, string(m["error"]), `-32601`)
	events := rec.list()
	require.Len(t, events, 2)
	require.Contains(t, events[0], "failed session/update: ")
	require.Contains(t, events[0], "nesting")
	require.Nil(t, c.Err())
}

// newRawClientSide starts a ClientSide wired to a rawPeer playing the agent.
func newRawClientSide(t *testing.T, impl gen.Client, opts *SideOptions) (*ClientSide, *rawPeer) {
	t.Helper()
	var cs *ClientSide
	p := startRawPeer(t, func(r io.Reader, w io.Writer) func() error {
		cs = NewClientSide(r, w, impl, opts)
		return cs.Close
	})
	return cs, p
}

// TestSDK10_ParamsDepthAgreesWithDecoders: params nested exactly as deep as
// the generated decoders accept reach the handler; one level more is
// answered -32602 with the request's id, as gen.DispatchClient answers it,
// instead of reaching a handler that cannot re-encode them.
func TestSDK10_ParamsDepthAgreesWithDecoders(t *testing.T) {
	_, p := newRawPeer(t, echoHandler, nil)
	for _, depth := range []int{jsonx.MaxDepth, jsonx.MaxDepth + 1} {
		params := `{"_meta":{"a":` + nested(depth-2) + `}}` // depth levels, params included
		decodersAccept := jsonx.Validate([]byte(params)) == nil
		_, genErr := gen.DispatchClient(t.Context(), &minimalClient{}, gen.MethodSessionUpdate, []byte(params))
		_, genTooDeep := errors.AsType[*gen.DecodeError](genErr)
		require.Equal(t, !decodersAccept, genTooDeep && strings.Contains(genErr.Error(), "nesting"), "%v", genErr)

		p.send(`{"jsonrpc":"2.0","id":7,"method":"echo","params":` + params + `}`)
		m := p.recvMsg()
		require.Equal(t, "7", string(m["id"]))
		if decodersAccept {
			require.Equal(t, params, string(m["result"]), "depth %d", depth)
			continue
		}
		var e Error
		require.NoError(t, json.Unmarshal(m["error"], &e), "depth %d", depth)
		require.Equal(t, CodeInvalidParams, e.Code, "depth %d", depth)
		require.JSONEq(t, `{"path":"params"}`, string(e.Data))
	}
	p.sync("1")
}

// TestSDK10_InvalidUTF8InParamsIsInvalidParams (issue #23): a request
// whose params hold a string that is not UTF-8 is answered under its own id,
// with -32602, wherever the id stands in the line; before, it got -32700
// with "id": null and the peer's call never completed. Invalid UTF-8
// anywhere else in the envelope still makes the line -32700.
func TestSDK10_InvalidUTF8InParamsIsInvalidParams(t *testing.T) {
	var rec recorder
	_, p := newRawPeer(t, echoHandler, &Options{Observer: rec.observer()})
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"a` + "\xff" + `b"}}`,
		`{"jsonrpc":"2.0","method":"echo","params":{"list":["ok","` + "\xc3\x28" + `"]},"id":3}`,
	} {
		require.Error(t, jsonx.Validate([]byte(line)))
		p.send(line)
		m := p.recvMsg()
		require.Equal(t, "3", string(m["id"]), line)
		var e Error
		require.NoError(t, json.Unmarshal(m["error"], &e))
		require.Equal(t, CodeInvalidParams, e.Code)
		require.Contains(t, e.Message, "UTF-8")
		require.JSONEq(t, `{"path":"params"}`, string(e.Data))
	}
	p.send(`{"jsonrpc":"2.0","id":"` + "\xff" + `","method":"echo","params":{}}`)
	m := p.recvMsg()
	require.Equal(t, "null", string(m["id"]), "an id that is not UTF-8 cannot be answered")
	require.Contains(t, string(m["error"]), `-32700`)
	p.send(`{"jsonrpc":"2.0","method":"note","params":{"text":"` + "\xff" + `"}}`)
	p.sync("1") // the notification is not answered
	events := rec.list()
	require.Len(t, events, 2)
	require.Contains(t, events[0], "unparsable")
	require.Contains(t, events[1], "failed note: ")
	require.Contains(t, events[1], "UTF-8")
}

// TestSDK10_InvalidUTF8InResultFailsTheCall: a response whose result is not
// UTF-8 fails its call (it was answered -32700 with "id": null, and the call
// waited for an answer that had come).
func TestSDK10_InvalidUTF8InResultFailsTheCall(t *testing.T) {
	c, p := newRawPeer(t, echoHandler, nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(t.Context(), "m", nil, nil) }()
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"m"}`, p.recv())
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + "\xff" + `"}}`)
	err := await(t, errc)
	require.ErrorIs(t, err, ErrMalformedResponse)
	require.Contains(t, err.Error(), "UTF-8")
	p.sync("1") // nothing answered the response
}

// TestSDK10_ResponseWithoutResultCompletesCall: {"jsonrpc":"2.0","id":1} is
// what JavaScript writes for result: undefined. It answers our call (with a
// null result) and is never answered back: an answer would carry id 1, which
// the peer would match to its own request 1.
func TestSDK10_ResponseWithoutResultCompletesCall(t *testing.T) {
	c, p := newRawPeer(t, echoHandler, nil)
	errc := make(chan error, 1)
	var res json.RawMessage
	go func() { errc <- c.Call(t.Context(), "m", nil, &res) }()
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"m"}`, p.recv())
	p.send(`{"jsonrpc":"2.0","id":1}`)
	require.NoError(t, await(t, errc))
	require.Equal(t, "null", string(res))
	p.sync("1") // the next line written is the ping's answer: nothing answered the response
}

// TestSDK10_ErrorNullBesideResultIsNoError: JSON-RPC 1.0-style peers send
// "error": null next to the result.
func TestSDK10_ErrorNullBesideResultIsNoError(t *testing.T) {
	c, p := newRawPeer(t, echoHandler, nil)
	errc := make(chan error, 1)
	var res json.RawMessage
	go func() { errc <- c.Call(t.Context(), "m", nil, &res) }()
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"ok":true},"error":null}`)
	require.NoError(t, await(t, errc))
	require.Equal(t, `{"ok":true}`, string(res))
}

// TestSDK8_DuplicateRequestIDIsInvalidRequest: a second request with the id
// of one still being handled is answered -32600 and reported; the first
// keeps its $/cancel_request handle.
func TestSDK8_DuplicateRequestIDIsInvalidRequest(t *testing.T) {
	var rec recorder
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "slow" {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return echoHandler(ctx, req)
	})
	_, p := newRawPeer(t, h, &Options{Observer: rec.observer()})
	p.send(`{"jsonrpc":"2.0","id":"x","method":"slow"}`)
	await(t, started)
	p.send(`{"jsonrpc":"2.0","id":"x","method":"ping"}`)
	m := p.recvMsg()
	require.Equal(t, `"x"`, string(m["id"]))
	require.Contains(t, string(m["error"]), `-32600`)
	require.Equal(t, []string{"invalid duplicate request id"}, rec.list())
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"x"}}`)
	m = p.recvMsg()
	require.Equal(t, `"x"`, string(m["id"]))
	require.Contains(t, string(m["error"]), `-32800`)
	// Once answered, the id may be used again.
	p.sync(`"x"`)
}

// rawInitAgent is an AgentSide whose middleware answers initialize with
// exactly the given bytes.
func rawInitAgent(init string) Middleware {
	return func(ctx context.Context, req *Request, next HandlerFunc) (any, error) {
		if req.Method == gen.MethodInitialize {
			return json.RawMessage(init), nil
		}
		return next(ctx, req)
	}
}

// TestSDK6_StrictReadsTheTypedCapabilities: strict mode decides from the
// same generated decode the user gets: lenient where the schema says so
// (x-deserialize-*), exact about member names.
func TestSDK6_StrictReadsTheTypedCapabilities(t *testing.T) {
	for _, tc := range []struct{ name, init string }{
		{"malformed sibling is dropped, not the whole object", `{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"image":true},"auth":5}}`},
		{"member names are case-sensitive", `{"protocolVersion":1,"agentCapabilities":{"LoadSession":true}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newStrictPair(t, tc.init, true, false)
			ctx := t.Context()
			res, err := p.client.Agent().Initialize(ctx, &gen.InitializeRequest{ProtocolVersion: 1})
			require.NoError(t, err)
			caps := res.AgentCapabilities

			_, err = p.client.Agent().LoadSession(ctx, &gen.LoadSessionRequest{SessionID: "s", Cwd: "/", McpServers: []gen.McpServer{}})
			require.Equal(t, caps.LoadSession, !errors.Is(err, ErrNotAdvertised), "loadSession %v: %v", caps.LoadSession, err)
			_, err = p.client.Agent().Prompt(ctx, mustDecode[gen.PromptRequest](t, `{"sessionId":"s","prompt":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`))
			require.Equal(t, caps.PromptCapabilities.Image, !errors.Is(err, ErrNotAdvertised), "image %v: %v", caps.PromptCapabilities.Image, err)
		})
	}
}

// TestSDK6_StrictAgentReadsTheTypedCapabilities: the same on the agent side,
// for the client's initialize request.
func TestSDK6_StrictAgentReadsTheTypedCapabilities(t *testing.T) {
	for _, tc := range []struct{ name, params string }{
		{"malformed sibling is dropped, not the whole object", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":"yes"}}`},
		{"member names are case-sensitive", `{"protocolVersion":1,"clientCapabilities":{"Terminal":true}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newStrictPair(t, "", false, true)
			ctx := t.Context()
			var typed gen.InitializeRequest
			require.NoError(t, json.Unmarshal([]byte(tc.params), &typed))
			require.NoError(t, p.client.Conn().Call(ctx, gen.MethodInitialize, json.RawMessage(tc.params), nil))
			c := p.agent.Client()
			_, err := c.ReadTextFile(ctx, &gen.ReadTextFileRequest{SessionID: "s", Path: "/a"})
			require.Equal(t, typed.ClientCapabilities.Fs.ReadTextFile, !errors.Is(err, ErrNotAdvertised), "readTextFile: %v", err)
			_, err = c.CreateTerminal(ctx, &gen.CreateTerminalRequest{SessionID: "s", Command: "ls"})
			require.Equal(t, typed.ClientCapabilities.Terminal, !errors.Is(err, ErrNotAdvertised), "terminal: %v", err)
		})
	}
}

// newStrictPair is a minimal client and agent; unless init is empty, the
// agent answers initialize with init byte for byte (bypassing its typed
// layer, so an agent side learns nothing from it).
func newStrictPair(t *testing.T, init string, clientStrict, agentStrict bool) *minimalPair {
	t.Helper()
	p := &minimalPair{}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	var mw Middleware
	if init != "" {
		mw = rawInitAgent(init)
	}
	p.agent = NewAgentSide(c2aR, a2cW, &minimalAgent{init: noCapsInit}, &SideOptions{Options: Options{Tap: p.agentTx.tap}, Strict: agentStrict, Middleware: mw})
	p.client = NewClientSide(a2cR, c2aW, &minimalClient{asked: make(chan struct{})}, &SideOptions{Options: Options{Tap: p.clientTx.tap}, Strict: clientStrict})
	t.Cleanup(func() {
		require.NoError(t, p.client.Close())
		require.NoError(t, p.agent.Close())
	})
	return p
}

// TestSDK5_StrictSendsParamsByteExact: strict mode inspects gated params
// but sends the bytes a non-strict side sends: no HTML escaping, no
// compaction of raw members.
func TestSDK5_StrictSendsParamsByteExact(t *testing.T) {
	params := `{"sessionId":"s","prompt":[{"type":"text","text":"<b>&</b>"}],"_meta":{ "a" : "<x>" }}`
	var sent [2]string
	for i, strict := range []bool{false, true} {
		p := newStrictPair(t, noCapsInit, strict, false)
		require.NoError(t, p.client.Call(t.Context(), gen.MethodSessionPrompt, json.RawMessage(params), nil))
		lines := p.clientTx.take()
		require.Len(t, lines, 1)
		sent[i] = lines[0]
	}
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":`+params+`}`, sent[0])
	require.Equal(t, sent[0], sent[1], "strict mode must not rewrite what it sends")
}

// TestSDK5_FlattenedUnionsRelayByteExact: decoded and sent on through a
// Conn, objects holding a flattened union (here an unknown config-option
// type, tag first, and explicit nulls) keep their bytes.
func TestSDK5_FlattenedUnionsRelayByteExact(t *testing.T) {
	c, p := newRawPeer(t, echoHandler, nil)
	for method, params := range map[string]string{
		gen.MethodSessionUpdate:          `{"sessionId":"s","update":{"sessionUpdate":"config_option_update","configOptions":[{"type":"slider","id":"o","name":"O","description":null,"min":0}]}}`,
		gen.MethodSessionSetConfigOption: `{"type":"boolean","value":true,"configId":"c","sessionId":"s","_meta":null}`,
	} {
		var v any
		switch method {
		case gen.MethodSessionUpdate:
			v = mustDecode[gen.SessionNotification](t, params)
		default:
			v = mustDecode[gen.SetSessionConfigOptionRequest](t, params)
		}
		require.NoError(t, c.Notify(t.Context(), method, v))
		require.Equal(t, `{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`}`, p.recv())
	}
}

// phaseOf reads a Conn's lifecycle phase.
func phaseOf(c *Conn) phase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.life.phase
}

// TestSDK9_LifecyclePhases walks a Conn through running, draining (the
// stream ended while a notification handler still runs) and done, then
// Close twice.
func TestSDK9_LifecyclePhases(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "block" {
			close(entered)
			<-release
		}
		return nil, nil
	})
	c, p := newRawPeer(t, h, nil)
	require.Equal(t, phaseRunning, phaseOf(c))
	require.Nil(t, c.Err())
	p.send(`{"jsonrpc":"2.0","method":"block"}`)
	await(t, entered)
	p.closeInput()
	<-c.readerDone
	require.Equal(t, phaseDraining, phaseOf(c))
	err := c.Call(t.Context(), "m", nil, nil)
	require.ErrorIs(t, err, ErrClosed, "no call is accepted once the stream ended")
	select {
	case <-c.Done():
		t.Fatal("done before the message read was handled")
	default:
	}
	close(release)
	await(t, c.Done())
	require.Equal(t, phaseDone, phaseOf(c))
	connErr, ok := errors.AsType[*ConnError](c.Err())
	require.True(t, ok, "%v", c.Err())
	require.Equal(t, "read", connErr.Op)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	require.Equal(t, phaseDone, phaseOf(c))
	require.Equal(t, "read", c.Err().(*ConnError).Op, "Close after the end keeps the reason")
}

// TestSDK10_TypedResultsDecodeOnceAsUnmarshalJSON: a typed call's result
// comes from a line the connection validated, so it is decoded without a
// second validation pass — into exactly what the type's UnmarshalJSON gives,
// with the same errors.
func TestSDK10_TypedResultsDecodeOnceAsUnmarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result string
		into   func() any
	}{
		{"initialize", `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true}},"agentInfo":{"name":"a","version":"1"},"authMethods":[],"_meta":{"k":[1,2]},"extra":null}`, func() any { return new(gen.InitializeResponse) }},
		{"prompt", `{"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`, func() any { return new(gen.PromptResponse) }},
		{"prompt missing stopReason", `{}`, func() any { return new(gen.PromptResponse) }},
		{"prompt unknown stopReason", `{"stopReason":"later"}`, func() any { return new(gen.PromptResponse) }},
		{"new session", `{"sessionId":"s","modes":null}`, func() any { return new(gen.NewSessionResponse) }},
		{"not an object", `[1]`, func() any { return new(gen.NewSessionResponse) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := tc.into(), tc.into()
			wantErr := json.Unmarshal([]byte(tc.result), want)
			ok, gotErr := decodeTrustedResult([]byte(tc.result), got)
			require.True(t, ok, "a generated result type takes the trusted path")
			if wantErr != nil {
				require.Error(t, gotErr)
				assert.Equal(t, wantErr.Error(), gotErr.Error())
				return
			}
			require.NoError(t, gotErr)
			assert.Equal(t, want, got)
			a, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, tc.result, string(a))
		})
	}
	for _, into := range []any{new(json.RawMessage), new(map[string]any), new(struct{ X int })} {
		ok, err := decodeTrustedResult([]byte(`{"X":1}`), into)
		assert.False(t, ok, "%T is not a generated result type", into)
		assert.NoError(t, err)
	}
	ok, _ := decodeTrustedResult([]byte(`null`), new(gen.PromptResponse))
	assert.False(t, ok, "null keeps json.Unmarshal's handling")
}
