package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentEnv_SetReplacesAndPassesOn(t *testing.T) {
	var e agentEnv
	require.NoError(t, e.Set("KEY=one"))
	require.NoError(t, e.Set("FROM_ME"))
	require.NoError(t, e.Set("KEY=two=with=equals"))
	require.Error(t, e.Set("=value"))
	require.Error(t, e.Set("BAD NAME=x"))
	lookup := func(name string) (string, bool) { return "passed-on", name == "FROM_ME" }
	env, secrets, err := e.apply([]string{"KEY=old", "HOME=/h"}, lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"HOME=/h", "FROM_ME=passed-on", "KEY=two=with=equals"}, env)
	assert.Equal(t, []string{"one", "passed-on", "two=with=equals"}, secrets)
	assert.Equal(t, "KEY=*** FROM_ME=*** KEY=***", e.String())

	missing := agentEnv{"MISSING"}
	_, _, err = missing.apply(nil, lookup)
	assert.ErrorContains(t, err, "MISSING is not set")
}
