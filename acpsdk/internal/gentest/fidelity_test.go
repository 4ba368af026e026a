package gentest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// decodeAs decodes data into a new T and re-encodes it with the type's own
// MarshalJSON.
func roundTrip[T any, P interface {
	*T
	json.Unmarshaler
	json.Marshaler
}](t *testing.T, data string) (*T, string) {
	t.Helper()
	v := P(new(T))
	require.NoError(t, v.UnmarshalJSON([]byte(data)))
	out, err := v.MarshalJSON()
	require.NoError(t, err)
	return (*T)(v), string(out)
}

// TestSDK5_BigIntegerInMetaSurvives: _meta is raw bytes, never float64.
func TestSDK5_BigIntegerInMetaSurvives(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","_meta":{"n":12345678901234567890}}},"_meta":{"n":12345678901234567890,"f":1.10}}`
	n, out := roundTrip[gen.SessionNotification](t, in)
	require.Equal(t, in, out)
	require.JSONEq(t, `{"n":12345678901234567890,"f":1.10}`, string(n.Meta))
	require.Contains(t, string(n.Meta), "12345678901234567890")
}

// TestSDK3_UnknownSessionUpdateIsKeptVerbatim: an unknown tag is the
// Unknown variant, never another variant, and re-encodes byte for byte
// (whitespace included).
func TestSDK3_UnknownSessionUpdateIsKeptVerbatim(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"future_thing", "content":{"type":"text","text":"x"},"n":12345678901234567890}}`
	n, out := roundTrip[gen.SessionNotification](t, in)
	u, ok := n.Update.(*gen.SessionUpdateUnknown)
	require.True(t, ok, "got %T", n.Update)
	require.Equal(t, `{"sessionUpdate":"future_thing", "content":{"type":"text","text":"x"},"n":12345678901234567890}`, string(u.Raw))
	require.Equal(t, in, out)
}

// TestSDK3_UnknownVariantsOfEveryUnion: each tagged union keeps an unknown
// tag (ContentBlock, ToolCallContent, McpServer, AuthMethod,
// RequestPermissionOutcome, SessionConfigOption's variant part).
func TestSDK3_UnknownVariantsOfEveryUnion(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want func(t *testing.T, data string)
	}{
		{"ContentBlock", `{"type":"video","url":"x"}`, func(t *testing.T, data string) {
			v, err := gen.UnmarshalContentBlock([]byte(data))
			require.NoError(t, err)
			require.IsType(t, &gen.ContentBlockUnknown{}, v)
		}},
		{"ToolCallContent", `{"type":"chart","series":[1,2]}`, func(t *testing.T, data string) {
			v, err := gen.UnmarshalToolCallContent([]byte(data))
			require.NoError(t, err)
			require.IsType(t, &gen.ToolCallContentUnknown{}, v)
		}},
		{"McpServer", `{"type":"websocket","name":"w","url":"ws://x"}`, func(t *testing.T, data string) {
			v, err := gen.UnmarshalMcpServer([]byte(data))
			require.NoError(t, err)
			require.IsType(t, &gen.McpServerUnknown{}, v)
		}},
		{"AuthMethod", `{"type":"env_var","id":"k","name":"API key","varName":"KEY"}`, func(t *testing.T, data string) {
			v, err := gen.UnmarshalAuthMethod([]byte(data))
			require.NoError(t, err)
			require.IsType(t, &gen.AuthMethodUnknown{}, v)
		}},
		{"RequestPermissionOutcome", `{"outcome":"deferred"}`, func(t *testing.T, data string) {
			v, err := gen.UnmarshalRequestPermissionOutcome([]byte(data))
			require.NoError(t, err)
			require.IsType(t, &gen.RequestPermissionOutcomeUnknown{}, v)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.want(t, c.in)
		})
	}
	// Inside a list, through the parent's codec, byte for byte.
	in := `{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"video","url":"x"}]}`
	p, out := roundTrip[gen.PromptRequest](t, in)
	require.Equal(t, in, out)
	require.IsType(t, &gen.ContentBlockText{}, p.Prompt[0])
	require.IsType(t, &gen.ContentBlockUnknown{}, p.Prompt[1])

	// A flattened union (SessionConfigOption's "type"): the unknown variant
	// keeps the members that are not the option's own.
	opt := `{"id":"o","name":"O","type":"slider","min":0,"max":10}`
	o, out := roundTrip[gen.SessionConfigOption](t, opt)
	require.Equal(t, opt, out)
	require.Equal(t, gen.SessionConfigID("o"), o.ID)
	u, ok := o.Type.(*gen.SessionConfigOptionTypeUnknown)
	require.True(t, ok, "got %T", o.Type)
	require.Equal(t, `{"type":"slider","min":0,"max":10}`, string(u.Raw))
}

// TestSDK5_UnknownFieldsAndAnnotationsSurvive: unknown members at every
// level and annotations re-encode byte for byte; the values are reachable
// through Extra.
func TestSDK5_UnknownFieldsAndAnnotationsSurvive(t *testing.T) {
	in := `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending","content":[{"type":"content","content":{"type":"resource_link","annotations":{"audience":["user","assistant"],"lastModified":"2025-01-01T00:00:00Z","priority":0.75,"vendorHint":true},"name":"f","size":12,"uri":"file:///f"},"x-wrap":1}],"locations":[{"path":"/f","line":3}],"rawInput":{"path":"/f","big":12345678901234567890},"vendor":{"a":[1,2,3]}},"trace":"abc"}`
	n, out := roundTrip[gen.SessionNotification](t, in)
	require.Equal(t, in, out)

	v, ok := n.Extra.Get("trace")
	require.True(t, ok)
	require.Equal(t, `"abc"`, string(v))
	tc, ok := n.Update.(*gen.SessionUpdateToolCall)
	require.True(t, ok)
	vendor, ok := tc.Extra.Get("vendor")
	require.True(t, ok)
	require.Equal(t, `{"a":[1,2,3]}`, string(vendor))
	require.Equal(t, `{"path":"/f","big":12345678901234567890}`, string(tc.RawInput))
	cc := tc.Content[0].(*gen.ToolCallContentContent)
	link := cc.Content.(*gen.ContentBlockResourceLink)
	require.NotNil(t, link.Annotations)
	require.Equal(t, []gen.Role{gen.RoleUser, gen.RoleAssistant}, link.Annotations.Audience)
	require.Equal(t, 0.75, *link.Annotations.Priority)
	hint, ok := link.Annotations.Extra.Get("vendorHint")
	require.True(t, ok)
	require.Equal(t, "true", string(hint))
}

// TestSDK5_ExtraMembersCanBeEdited: Set and Delete on Extra show in the
// encoding.
func TestSDK5_ExtraMembersCanBeEdited(t *testing.T) {
	var r gen.PromptResponse
	require.NoError(t, r.UnmarshalJSON([]byte(`{"stopReason":"end_turn","usage":{"in":1}}`)))
	require.NoError(t, r.Extra.Set("usage", json.RawMessage(`{"in":2}`)))
	require.NoError(t, r.Extra.Set("new", json.RawMessage(`[]`)))
	out, err := r.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"stopReason":"end_turn","usage":{"in":2},"new":[]}`, string(out))
	r.Extra.Delete("usage")
	require.Equal(t, 1, r.Extra.Len())
	require.Error(t, r.Extra.Set("bad", json.RawMessage(`{`)))
}

// TestSDK3_UntaggedBranches: McpServer stdio and AuthMethod agent have no
// tag; they are the variant when the tag is absent.
func TestSDK3_UntaggedBranches(t *testing.T) {
	in := `{"cwd":"/w","mcpServers":[{"name":"fs","command":"mcp-fs","args":["--ro"],"env":[{"name":"A","value":"1"}]},{"type":"http","name":"h","url":"https://h","headers":[{"name":"X","value":"y"}]},{"type":"sse","name":"s","url":"https://s","headers":[]}]}`
	r, out := roundTrip[gen.NewSessionRequest](t, in)
	require.Equal(t, in, out)
	require.IsType(t, &gen.McpServerStdio{}, r.McpServers[0])
	require.IsType(t, &gen.McpServerHTTP{}, r.McpServers[1])
	require.IsType(t, &gen.McpServerSSE{}, r.McpServers[2])
	require.Equal(t, []string{"--ro"}, r.McpServers[0].(*gen.McpServerStdio).Args)

	a, err := gen.UnmarshalAuthMethod([]byte(`{"id":"login","name":"Log in"}`))
	require.NoError(t, err)
	require.Equal(t, &gen.AuthMethodAgent{ID: "login", Name: "Log in"}, a)

	// The variant's own MarshalJSON speaks the union's form (with the tag).
	b, err := json.Marshal(&gen.McpServerHTTP{Name: "h", URL: "u", Headers: []gen.HTTPHeader{}})
	require.NoError(t, err)
	require.Equal(t, `{"type":"http","name":"h","url":"u","headers":[]}`, string(b))
}

// TestSDK3_ShapeUnions: RequestID and EmbeddedResourceResource pick the
// variant from the value's shape.
func TestSDK3_ShapeUnions(t *testing.T) {
	for in, want := range map[string]gen.RequestID{
		`0`:        gen.RequestIDNumber(0),
		`-5`:       gen.RequestIDNumber(-5),
		`"abc"`:    gen.RequestIDStr("abc"),
		`null`:     gen.RequestIDNull{},
		` 42 `:     gen.RequestIDNumber(42),
		`"0"`:      gen.RequestIDStr("0"),
		`"\u00e9"`: gen.RequestIDStr("é"),
	} {
		got, err := gen.UnmarshalRequestID([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := gen.UnmarshalRequestID([]byte(`1.5`))
	require.ErrorIs(t, err, gen.ErrType)
	_, err = gen.UnmarshalRequestID([]byte(`{}`))
	require.ErrorIs(t, err, gen.ErrType)

	in := `{"resource":{"blob":"AAE=","mimeType":"application/octet-stream","uri":"file:///b"}}`
	r, out := roundTrip[gen.EmbeddedResource](t, in)
	require.Equal(t, in, out)
	require.IsType(t, &gen.BlobResourceContents{}, r.Resource)

	_, err = gen.UnmarshalEmbeddedResourceResource([]byte(`{"uri":"x"}`))
	require.ErrorIs(t, err, gen.ErrMissingField)
}

// TestSDK2_EnumsAndErrorCode: closed enums reject unknown values, open
// enums keep them, ErrorCode is a typed integer with the schema constants.
func TestSDK2_EnumsAndErrorCode(t *testing.T) {
	var s gen.StopReason
	require.NoError(t, s.UnmarshalJSON([]byte(`"max_turn_requests"`)))
	require.Equal(t, gen.StopReasonMaxTurnRequests, s)
	err := s.UnmarshalJSON([]byte(`"tired"`))
	require.ErrorIs(t, err, gen.ErrInvalidValue)

	// NoticeSeverity is open: an unknown value round-trips.
	in := `{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"critical","title":"disk"}}`
	n, out := roundTrip[gen.SessionNotification](t, in)
	require.Equal(t, in, out)
	require.Equal(t, gen.NoticeSeverity("critical"), n.Update.(*gen.SessionUpdateNotice).Severity)

	require.Equal(t, gen.ErrorCode(-32700), gen.ErrorCodeParseError)
	require.Equal(t, gen.ErrorCode(-32000), gen.ErrorCodeAuthenticationRequired)
	require.Equal(t, gen.ErrorCode(-32800), gen.ErrorCodeRequestCancelled)
	e, out := roundTrip[gen.Error](t, `{"code":500,"message":"upstream","data":{"retry":true}}`)
	require.Equal(t, `{"code":500,"message":"upstream","data":{"retry":true}}`, out)
	require.Equal(t, gen.ErrorCode(500), e.Code)
}

// TestSDK2_IdiomaticNamesAndVersion: names and the pinned version.
func TestSDK2_IdiomaticNamesAndVersion(t *testing.T) {
	var _ gen.SessionID = "s"
	var _ gen.ToolCallID = "t"
	var _ gen.MessageID = "m"
	pin := readPinned(t)
	require.Equal(t, pin.Package, gen.SchemaPackage)
	require.Equal(t, pin.Version, gen.SchemaVersion)
	require.Equal(t, pin.SHA256, gen.SchemaSHA256)
	require.Contains(t, pin.File, fmt.Sprintf("/v%d/", gen.LatestProtocolVersion), "the version the schema's path names")
}

// TestSDK5_MemberOrderIsKept: a peer's member order (tag last, unknown
// members in the middle, known members out of schema order) re-encodes
// byte for byte; members set after decoding are added in schema order.
func TestSDK5_MemberOrderIsKept(t *testing.T) {
	for _, in := range []string{
		`{"update":{"content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"},"sessionId":"s"}`,
		`{"sessionId":"s","vendor":1,"update":{"toolCallId":"t","sessionUpdate":"tool_call","x":[],"title":"T","status":"pending","kind":"edit"}}`,
		`{"resource":{"uri":"file:///b","mimeType":"application/octet-stream","blob":"AAE="},"annotations":{"priority":1.5,"audience":["user"]}}`,
		`{"cwd":"/w","mcpServers":[{"type":"http","url":"https://h","name":"h","headers":[]},{"env":[],"args":[],"command":"c","name":"n"}]}`,
	} {
		var out string
		switch {
		case strings.Contains(in, `"resource"`):
			_, out = roundTrip[gen.EmbeddedResource](t, in)
		case strings.Contains(in, `"cwd"`):
			_, out = roundTrip[gen.NewSessionRequest](t, in)
		default:
			_, out = roundTrip[gen.SessionNotification](t, in)
		}
		require.Equal(t, in, out)
	}

	var n gen.SessionNotification
	require.NoError(t, n.UnmarshalJSON([]byte(`{"update":{"sessionUpdate":"plan","entries":[]},"sessionId":"s"}`)))
	n.Meta = []byte(`{"added":true}`)
	n.SessionID = "s2"
	out, err := n.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"update":{"sessionUpdate":"plan","entries":[]},"sessionId":"s2","_meta":{"added":true}}`, string(out))

	// A value built in Go has no arrival order: schema order.
	out, err = (&gen.SessionNotification{SessionID: "s", Update: &gen.SessionUpdatePlan{Entries: []gen.PlanEntry{}}}).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`, string(out))
}

// TestSDK11_PublicDecodeOwnsItsInput: the decoders' strings share their
// input, so the public entry points decode a private copy: a caller that
// reuses its buffer after UnmarshalJSON, an Unmarshal function or
// DispatchClient does not change what was decoded.
func TestSDK11_PublicDecodeOwnsItsInput(t *testing.T) {
	wipe := func(b []byte) {
		for i := range b {
			b[i] = 'X'
		}
	}
	buf := []byte(chunk)
	var n gen.SessionNotification
	require.NoError(t, n.UnmarshalJSON(buf))
	wipe(buf)
	require.Equal(t, gen.SessionID("sess_01HZY8M3Q4T7W2X9K5R6B1C0DE"), n.SessionID)
	text := n.Update.(*gen.SessionUpdateAgentMessageChunk).Content.(*gen.ContentBlockText).Text
	require.True(t, strings.HasPrefix(text, "Sure, I can help"), text)

	buf = []byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"union"}}`)
	u, err := gen.UnmarshalSessionUpdate(buf)
	require.NoError(t, err)
	wipe(buf)
	require.Equal(t, "union", u.(*gen.SessionUpdateAgentMessageChunk).Content.(*gen.ContentBlockText).Text)

	buf = []byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"variant"}}`)
	var v gen.SessionUpdateAgentMessageChunk
	require.NoError(t, v.UnmarshalJSON(buf))
	wipe(buf)
	require.Equal(t, "variant", v.Content.(*gen.ContentBlockText).Text)

	buf = []byte(chunk)
	var got *gen.SessionNotification
	_, err = gen.DispatchClient(t.Context(), keepClient{keep: &got}, gen.MethodSessionUpdate, buf)
	require.NoError(t, err)
	wipe(buf)
	require.Equal(t, gen.SessionID("sess_01HZY8M3Q4T7W2X9K5R6B1C0DE"), got.SessionID)
}

// keepClient is a gen.Client that keeps the session/update it is given.
type keepClient struct {
	gen.Client // nil: only SessionUpdate is called
	keep       **gen.SessionNotification
}

func (c keepClient) SessionUpdate(_ context.Context, n *gen.SessionNotification) error {
	*c.keep = n
	return nil
}
