package acpsdk

import (
	"errors"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen/v2"
	"acpkit.dev/acpsdk/gen/v2unstable"
	"acpkit.dev/acpsdk/internal/surface"
)

// TestCapabilityTablesV2 pins the v2 draft's rows against raw capability
// messages: no session/* method without capabilities.session, prompt
// content by capabilities.session.prompt, auth/* by a non-empty
// authMethods, set_config_option by a non-empty configOptions on the
// session.
func TestCapabilityTablesV2(t *testing.T) {
	spec := surface.SpecOf(v2.Surface)
	strict := func(peerIsAgent bool) *strictState {
		return newStrictState(spec.Schema, peerIsAgent, spec.NewParams, spec.NewResult)
	}
	info := `"protocolVersion":2,"info":{"name":"a","version":"1"}`
	full := `{` + info + `,"authMethods":[{"type":"agent","methodId":"a","name":"A"}],"capabilities":{"session":{"delete":{},"prompt":{"image":{},"audio":{},"embeddedContext":{}}}}}`
	none := `{` + info + `,"authMethods":[],"capabilities":{}}`
	for _, r := range []struct{ method, params, requires string }{
		{v2.MethodAuthLogin, `{"methodId":"a"}`, "authMethods"},
		{v2.MethodAuthLogout, `{}`, "authMethods"},
		{v2.MethodSessionNew, `{}`, "capabilities.session"},
		{v2.MethodSessionList, `{}`, "capabilities.session"},
		{v2.MethodSessionResume, `{}`, "capabilities.session"},
		{v2.MethodSessionClose, `{}`, "capabilities.session"},
		{v2.MethodSessionCancel, `{}`, "capabilities.session"},
		{v2.MethodSessionDelete, `{}`, "capabilities.session.delete"},
		{v2.MethodSessionPrompt, `{"prompt":[{"type":"text"}]}`, "capabilities.session"},
		{v2.MethodSessionSetConfigOption, `{"sessionId":"s"}`, "configOptions in the session's setup response"},
	} {
		f, n := strict(true), strict(true)
		learn(t, f, methodInitialize, nil, full)
		learn(t, f, v2.MethodSessionNew, nil, `{"sessionId":"s","configOptions":[{"configId":"m","name":"M","type":"select","currentValue":"a","options":[{"value":"a","name":"A"}]}]}`)
		learn(t, n, methodInitialize, nil, none)
		learn(t, n, v2.MethodSessionNew, nil, `{"sessionId":"s","configOptions":[]}`)
		_, err := f.check(r.method, json.RawMessage(r.params))
		require.NoError(t, err, r.method)
		_, err = n.check(r.method, json.RawMessage(r.params))
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s: %v", r.method, err)
		require.Equal(t, r.requires, ce.Requires)
	}
	// With capabilities.session but no prompt capabilities, text passes and
	// an image is refused.
	bare := strict(true)
	learn(t, bare, methodInitialize, nil, `{`+info+`,"capabilities":{"session":{}}}`)
	_, err := bare.check(v2.MethodSessionPrompt, json.RawMessage(`{"prompt":[{"type":"text"}]}`))
	require.NoError(t, err)
	_, err = bare.check(v2.MethodSessionPrompt, json.RawMessage(`{"prompt":[{"type":"image"}]}`))
	ce, ok := errors.AsType[*CapabilityError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "capabilities.session.prompt.image", ce.Requires)

	c := strict(false)
	c.learnInitialize([]byte(`{` + info + `,"capabilities":{"elicitation":{"form":{}}}}`))
	_, err = c.check(v2.MethodElicitationCreate, json.RawMessage(`{"mode":"form"}`))
	require.NoError(t, err)
	_, err = c.check(v2.MethodElicitationCreate, json.RawMessage(`{"mode":"url"}`))
	require.ErrorIs(t, err, ErrNotAdvertised)
	_, err = c.check(v2.MethodElicitationComplete, json.RawMessage(`{}`))
	require.ErrorIs(t, err, ErrNotAdvertised)
}

// TestCapabilityTablesV2Unstable pins the rows v2 unstable adds to v2.
func TestCapabilityTablesV2Unstable(t *testing.T) {
	spec := surface.SpecOf(v2unstable.Surface)
	info := `"protocolVersion":2,"info":{"name":"a","version":"1"}`
	full := `{` + info + `,"capabilities":{"providers":{},"auth":{"status":{}},"session":{"fork":{},"title":{},"status":{},"archive":{}}}}`
	none := `{` + info + `,"capabilities":{"session":{}}}`
	for _, r := range []struct{ method, requires string }{
		{v2unstable.MethodSessionFork, "capabilities.session.fork"},
		{v2unstable.MethodSessionSetTitle, "capabilities.session.title"},
		{v2unstable.MethodSessionStatus, "capabilities.session.status"},
		{v2unstable.MethodSessionArchive, "capabilities.session.archive"},
		{v2unstable.MethodSessionUnarchive, "capabilities.session.archive"},
		{v2unstable.MethodAuthStatus, "capabilities.auth.status"},
		{v2unstable.MethodProvidersList, "capabilities.providers"},
	} {
		f := newStrictState(spec.Schema, true, spec.NewParams, spec.NewResult)
		n := newStrictState(spec.Schema, true, spec.NewParams, spec.NewResult)
		learn(t, f, methodInitialize, nil, full)
		learn(t, n, methodInitialize, nil, none)
		_, err := f.check(r.method, json.RawMessage(`{}`))
		require.NoError(t, err, r.method)
		_, err = n.check(r.method, json.RawMessage(`{}`))
		ce, ok := errors.AsType[*CapabilityError](err)
		require.True(t, ok, "%s: %v", r.method, err)
		require.Equal(t, r.requires, ce.Requires)
	}
}
