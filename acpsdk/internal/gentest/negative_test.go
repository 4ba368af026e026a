package gentest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

func decodeNotification(s string) (*gen.SessionNotification, error) {
	var n gen.SessionNotification
	err := n.UnmarshalJSON([]byte(s))
	return &n, err
}

// requirePath checks err is a *gen.DecodeError at path with cause kind.
func requirePath(t *testing.T, err error, path string, kind error) {
	t.Helper()
	var de *gen.DecodeError
	require.True(t, errors.As(err, &de), "want *gen.DecodeError, got %T %v", err, err)
	require.Equal(t, path, de.Path, "error: %v", err)
	require.ErrorIs(t, err, kind)
}

// TestSDK4_MissingRequiredFieldNamesItsPath: through dispatch, the path
// starts at params (SDK-10's -32602 uses it).
func TestSDK4_MissingRequiredFieldNamesItsPath(t *testing.T) {
	_, err := gen.DispatchClient(context.Background(), &fakeClient{}, gen.MethodSessionUpdate,
		[]byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`))
	requirePath(t, err, "params.update.content", gen.ErrMissingField)
	require.EqualError(t, err, "params.update.content: missing required field")

	cases := []struct {
		in, path string
		kind     error
	}{
		{`{"update":{"sessionUpdate":"plan","entries":[]}}`, "sessionId", gen.ErrMissingField},
		{`{"sessionId":"s"}`, "update", gen.ErrMissingField},
		{`{"sessionId":"s","update":{"content":{"type":"text","text":"x"}}}`, "update.sessionUpdate", gen.ErrMissingField},
		{`{"sessionId":"s","update":{"sessionUpdate":7}}`, "update.sessionUpdate", gen.ErrType},
		{`{"sessionId":1,"update":{"sessionUpdate":"plan","entries":[]}}`, "sessionId", gen.ErrType},
		{`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":-1,"size":10}}`, "update.used", gen.ErrInvalidValue},
		{`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":18446744073709551616,"size":10}}`, "update.used", gen.ErrInvalidValue},
		{`{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"info","title":""}}`, "update.title", gen.ErrInvalidValue},
		{`{"sessionId":"s","update":{"sessionUpdate":"tool_call","title":"t"}}`, "update.toolCallId", gen.ErrMissingField},
		{`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA=="}}}`, "update.content.mimeType", gen.ErrMissingField},
		{`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":["x"]}}}`, "update.content.text", gen.ErrType},
		{`{"sessionId":"s","update":[]}`, "update", gen.ErrType},
		{`{"sessionId":"s",}`, "", gen.ErrSyntax},
		{`{"sessionId":"s"} x`, "", gen.ErrSyntax},
		{`{"sessionId":"\u12"}`, "", gen.ErrSyntax},
		{"{\"sessionId\":\"\xff\"}", "", gen.ErrSyntax},
		{`[]`, "", gen.ErrType},
		{``, "", gen.ErrSyntax},
	}
	for _, c := range cases {
		_, err := decodeNotification(c.in)
		requirePath(t, err, c.path, c.kind)
	}

	var p gen.PromptRequest
	err = p.UnmarshalJSON([]byte(`{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"text"}]}`))
	requirePath(t, err, "prompt[1].text", gen.ErrMissingField)
}

// TestSDK3_MalformedKnownVariantIsAnError: a known tag with a bad body is
// an error, never the unknown variant.
func TestSDK3_MalformedKnownVariantIsAnError(t *testing.T) {
	for _, in := range []string{
		`{"type":"text"}`,
		`{"type":"text","text":1}`,
		`{"type":"resource","resource":{"uri":"x"}}`,
		`{"type":"image","mimeType":"image/png"}`,
	} {
		v, err := gen.UnmarshalContentBlock([]byte(in))
		require.Error(t, err, in)
		require.Nil(t, v)
	}
	_, err := gen.UnmarshalMcpServer([]byte(`{"type":"http","name":"h"}`))
	requirePath(t, err, "url", gen.ErrMissingField)
	// The untagged branch is not a catch-all: stdio must be well formed.
	_, err = gen.UnmarshalMcpServer([]byte(`{"name":"x"}`))
	requirePath(t, err, "command", gen.ErrMissingField)
	_, err = gen.UnmarshalRequestPermissionOutcome([]byte(`{"outcome":"selected"}`))
	requirePath(t, err, "optionId", gen.ErrMissingField)
}

// TestSDK5_EncodeRefusesBrokenValues: a nil required union or invalid raw
// JSON is an encode error, never broken output.
func TestSDK5_EncodeRefusesBrokenValues(t *testing.T) {
	_, err := (&gen.SessionNotification{SessionID: "s"}).MarshalJSON()
	require.ErrorIs(t, err, gen.ErrEncode)
	_, err = (&gen.SessionNotification{SessionID: "s", Update: &gen.SessionUpdatePlan{}, Meta: []byte(`{"a":`)}).MarshalJSON()
	require.ErrorIs(t, err, gen.ErrSyntax)
	_, err = (&gen.SessionNotification{SessionID: "s", Update: &gen.SessionUpdatePlan{}, Meta: []byte(`[1]`)}).MarshalJSON()
	require.ErrorIs(t, err, gen.ErrEncode)
	var nilText *gen.ContentBlockText
	_, err = (&gen.PromptRequest{SessionID: "s", Prompt: []gen.ContentBlock{nilText}}).MarshalJSON()
	require.ErrorIs(t, err, gen.ErrEncode)
}
