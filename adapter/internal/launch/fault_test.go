package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/contract"
	"acpkit.dev/adapter/internal/fault"
)

// requireFault asserts err is a *fault.Error of kind with message msg.
func requireFault(t *testing.T, err error, kind contract.Kind, msg string) *fault.Error {
	t.Helper()
	var f *fault.Error
	require.ErrorAs(t, err, &f)
	assert.Equal(t, kind, f.Kind)
	assert.Equal(t, msg, f.Message)
	return f
}
