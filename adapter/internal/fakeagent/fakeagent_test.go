package fakeagent

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadMatchesMemberNamesExactly: the fake runtime reads what the
// adapter sends as acpsdk and gen read it, by exact member names, so a
// test cannot pass on a line whose "ID" or "METHOD" only case-folds to the
// protocol's name.
func TestReadMatchesMemberNamesExactly(t *testing.T) {
	a := New(strings.NewReader(
		`{"jsonrpc":"2.0","ID":1,"METHOD":"initialize","PARAMS":{},"ERROR":{"code":1,"message":"m"}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}`+"\n"+
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}`+"\n"+
			`{"jsonrpc":"2.0","id":4,"method":7}`+"\n"), io.Discard)
	m, err := a.Read()
	require.NoError(t, err)
	assert.Empty(t, m.Method)
	assert.Nil(t, m.ID)
	assert.Nil(t, m.Params)
	assert.Nil(t, m.Error)

	m, err = a.Read()
	require.NoError(t, err)
	assert.Equal(t, "session/new", m.Method)
	assert.Equal(t, "2", string(m.ID))
	assert.JSONEq(t, `{"cwd":"/"}`, string(m.Params))

	m, err = a.Read()
	require.NoError(t, err)
	require.NotNil(t, m.Error)
	assert.Equal(t, -32601, m.Error.Code)
	assert.Equal(t, "Method not found", m.Error.Message)

	_, err = a.Read()
	assert.ErrorContains(t, err, "fakeagent: bad line", "a method that is no string")
	_, err = a.Read()
	assert.ErrorIs(t, err, io.EOF)
}
