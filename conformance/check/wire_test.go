package check

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMessage_Classifies(t *testing.T) {
	tests := []struct {
		line                             string
		invalid, resp, notif, req, hasID bool
	}{
		{line: `{"jsonrpc":"2.0","id":1,"result":{}}`, resp: true, hasID: true},
		{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, resp: true, hasID: true},
		{line: `{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`, resp: true},
		{line: `{"jsonrpc":"2.0","method":"session/update","params":{}}`, notif: true},
		{line: `{"jsonrpc":"2.0","id":"a","method":"session/request_permission","params":{}}`, req: true, hasID: true},
		{line: `not json`, invalid: true},
		{line: `[1,2]`, invalid: true},
		{line: `{"method":7}`, invalid: true},
		{line: `{"error":"nope","id":1}`, invalid: true, hasID: true},
	}
	for _, tt := range tests {
		m := parseMessage([]byte(tt.line))
		assert.Equal(t, tt.invalid, m.Invalid, tt.line)
		assert.Equal(t, tt.resp, m.IsResponse(), tt.line)
		assert.Equal(t, tt.notif, m.IsNotification(), tt.line)
		assert.Equal(t, tt.req, m.IsRequest(), tt.line)
		assert.Equal(t, tt.hasID, m.HasID, tt.line)
	}
}

// FuzzParseMessage: any line classifies without panicking, into at most
// one of response, notification and request.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"id":null,"error":{"code":1,"message":""}}`,
		`{"method":"x"}`, `{"method":"x","id":0}`, `null`, `[]`, `{`, `"s"`, `{"id":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := parseMessage(b)
		n := 0
		for _, ok := range []bool{m.IsResponse(), m.IsNotification(), m.IsRequest()} {
			if ok {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("%q classified %d ways", b, n)
		}
		if m.Invalid && n != 0 {
			t.Fatalf("%q invalid yet classified", b)
		}
	})
}

func TestCapabilityShapeErrors(t *testing.T) {
	good := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false},
		"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"resume":{},"close":null,"vendorThing":7},
		"auth":{"logout":{}}},"authMethods":[],"agentInfo":{"name":"a","version":"1"}}`
	errs, err := capabilityShapeErrors(json.RawMessage(good))
	require.NoError(t, err)
	assert.Empty(t, errs)

	bad := `{"agentCapabilities":{"loadSession":"yes","mcpCapabilities":{"http":1},"sessionCapabilities":{"resume":true}},
		"authMethods":{},"agentInfo":{"name":3}}`
	errs, err = capabilityShapeErrors(json.RawMessage(bad))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"agentCapabilities.loadSession: want a boolean, got a string",
		"agentCapabilities.mcpCapabilities.http: want a boolean, got a number",
		"agentCapabilities.sessionCapabilities.resume: want an object or null, got a boolean",
		"agentInfo.name: want a string, got a number",
		"authMethods: want an array, got an object",
	}, errs)

	_, err = capabilityShapeErrors(json.RawMessage(`[1]`))
	require.Error(t, err)
}

// FuzzCapabilityShapeErrors: any initialize result is judged without
// panicking.
func FuzzCapabilityShapeErrors(f *testing.F) {
	f.Add([]byte(`{"agentCapabilities":{"loadSession":true}}`))
	f.Add([]byte(`{"agentCapabilities":{"sessionCapabilities":{"resume":true}}}`))
	f.Add([]byte(`{"agentInfo":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = capabilityShapeErrors(b)
	})
}

// TestStandard_GatesAreLearned: every gate a check names is one the
// handshake or session/new sets.
func TestStandard_GatesAreLearned(t *testing.T) {
	for _, c := range Standard().Checks() {
		if c.Gate != "" {
			assert.Contains(t, knownGates, c.Gate, c.ID)
		}
	}
}
