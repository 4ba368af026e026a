package adapter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"acpkit.dev/adapter/internal/contain"
)

func TestTD15_ContainmentsAreTheLaunchersModes(t *testing.T) {
	require.Len(t, Containments, len(contain.Modes))
	for i, c := range Containments {
		assert.Equal(t, string(contain.Modes[i]), string(c))
	}
	assert.Equal(t, ContainmentAuto, Containments[0], "the default first")
}

func TestTD15_NewRefusesAnUnknownContainment(t *testing.T) {
	for _, c := range Containments {
		_, err := New(nil, WithContainment(c))
		assert.NoError(t, err, c)
	}
	_, err := New(nil, WithContainment("cgroup"))
	assert.EqualError(t, err, `unknown containment "cgroup": want one of auto, tracked, off`)
}
