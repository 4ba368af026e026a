package adapter

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

// TestHS1_InitializeParamsAreGeneratedRequest: HS-1's params stay a fixed
// document because a Go-built gen.ClientCapabilities also encodes the
// schema-defaulted "auth" member, which HS-1 does not offer. The document
// must still be a gen.InitializeRequest offering nothing, and gen's codec
// must reproduce it byte for byte.
func TestHS1_InitializeParamsAreGeneratedRequest(t *testing.T) {
	var r gen.InitializeRequest
	require.NoError(t, json.Unmarshal(initializeParams, &r))
	assert.Equal(t, gen.ProtocolVersion(1), r.ProtocolVersion)
	c := r.ClientCapabilities
	assert.False(t, c.Fs.ReadTextFile || c.Fs.WriteTextFile || c.Terminal || c.Auth.Terminal)
	assert.Nil(t, c.Session)
	assert.Nil(t, c.Elicitation)
	assert.Nil(t, r.ClientInfo)
	again, err := json.Marshal(&r)
	require.NoError(t, err)
	assert.Equal(t, string(initializeParams), string(again))
}

// TestPM1_PermissionAnswersAreGeneratedResponses: the PM-1/PM-2 answers,
// built from gen's types, keep the spec's bytes.
func TestPM1_PermissionAnswersAreGeneratedResponses(t *testing.T) {
	for want, v := range map[string]*gen.RequestPermissionResponse{
		`{"outcome":{"outcome":"selected","optionId":"r1"}}`: permissionSelected("r1"),
		`{"outcome":{"outcome":"cancelled"}}`:                permissionCancelled,
	} {
		got, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
}
