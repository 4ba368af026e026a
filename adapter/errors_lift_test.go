package adapter

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/fault"
)

// TestLiftKeepsKindMessageAndCause pins the bridge from internal packages:
// a *fault.Error of any kind becomes the *Error with the same kind, message
// and cause.
func TestLiftKeepsKindMessageAndCause(t *testing.T) {
	cause := errors.New("boom")
	for _, k := range []Kind{KindInvalidWorkspaceCwd, KindAgentNotFound, KindResponseError, KindPortExit, KindTurnCancelled} {
		err := lift(fmt.Errorf("context: %w", fault.New(k, "message", cause)))
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, k, e.Kind)
		assert.Equal(t, "message", e.Message)
		assert.ErrorIs(t, err, cause)
	}
	plain := errors.New("plain")
	assert.Same(t, plain, lift(plain))
	assert.NoError(t, lift(nil))
}

// TestErrorDoesNotRepeatAnEmbeddedCause covers messages like MCP-5's that
// already end with their cause's text.
func TestErrorDoesNotRepeatAnEmbeddedCause(t *testing.T) {
	cause := errors.New("mcpServers: not an object")
	e := &Error{Kind: KindResponseError, Message: "parse MCP config: " + cause.Error(), Err: cause}
	assert.Equal(t, "parse MCP config: mcpServers: not an object", e.Error())
	e2 := &Error{Kind: KindPortExit, Message: "failed to start subprocess", Err: cause}
	assert.Equal(t, "failed to start subprocess: mcpServers: not an object", e2.Error())
	f := fault.New(KindResponseError, "parse MCP config: "+cause.Error(), cause)
	assert.Equal(t, e.Error(), f.Error())
}
