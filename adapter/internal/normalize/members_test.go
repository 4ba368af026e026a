package normalize

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEV9_MemberMatchesNamesExactly(t *testing.T) {
	for _, c := range []struct {
		obj, name, want string
		found           bool
	}{
		{`{"sessionId":"s"}`, "sessionId", `"s"`, true},
		{`{"SESSIONID":"s"}`, "sessionId", ``, false},
		{`{"SESSIONID":"x","sessionId":"s"}`, "sessionId", `"s"`, true},
		{`{"session\u0049d":"s"}`, "sessionId", `"s"`, true},
		{`{"sessionId":"a","sessionId":"b"}`, "sessionId", `"b"`, true},
		{` { "a" : {"sessionId":1} , "sessionId" : [1,{"x":"]"}] } `, "sessionId", `[1,{"x":"]"}]`, true},
		{`{"a":{"sessionId":1}}`, "sessionId", ``, false},
		{`{"a":"\"}","b":2}`, "b", `2`, true},
		{`{}`, "a", ``, false},
		{`[{"a":1}]`, "a", ``, false},
		{`{"a":1`, "a", ``, false},
		{`{"a"1}`, "a", ``, false},
		{``, "a", ``, false},
	} {
		got, found := Member([]byte(c.obj), c.name)
		assert.Equal(t, c.found, found, c.obj)
		assert.Equal(t, c.want, string(got), c.obj)
	}
}

func TestPM1_ElementsWalksAnArray(t *testing.T) {
	var got []string
	assert.True(t, Elements([]byte(` [ {"a":[1,2]} , "x,]" ,3 ] `), func(v []byte) { got = append(got, string(v)) }))
	assert.Equal(t, []string{`{"a":[1,2]}`, `"x,]"`, `3`}, got)
	assert.True(t, Elements([]byte(`[]`), func([]byte) { t.Fatal("no element") }))
	assert.False(t, Elements([]byte(`{"a":1}`), func([]byte) {}))
	assert.False(t, Elements([]byte(`[1,`), func([]byte) {}))
}

// FuzzMember: any bytes never panic; in valid JSON a member found is a
// whole value.
func FuzzMember(f *testing.F) {
	for _, s := range []string{`{"sessionId":"s","update":{"sessionUpdate":"plan"}}`, `{"a":[1,{"b":"\"]"}]}`, `[1,2]`, `{`} {
		f.Add([]byte(s), "sessionId")
	}
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		v, ok := Member(b, name)
		if ok && json.Valid(b) && !json.Valid(v) {
			t.Fatalf("member %q of %q is %q", name, b, v)
		}
		Elements(b, func(v []byte) {
			if json.Valid(b) && !json.Valid(v) {
				t.Fatalf("element %q of %q", v, b)
			}
		})
	})
}

// TestEV10_ReadEnvelopeMatchesExactNames: the envelope reader takes id,
// method, params, result and error by their exact names in one walk;
// case-folded names are other members, a null method or error is absent,
// and a method of another type is no message.
func TestEV10_ReadEnvelopeMatchesExactNames(t *testing.T) {
	e, ok := ReadEnvelope([]byte(`{"jsonrpc":"2.0","ID":9,"id":3,"METHOD":"x","method":"session/prompt","Params":{},"params":{"a":1},"result":true,"error":null}` + "\n"))
	require.True(t, ok)
	assert.Equal(t, "3", string(e.ID))
	assert.Equal(t, "session/prompt", e.Method)
	assert.Equal(t, `{"a":1}`, string(e.Params))
	assert.Equal(t, "true", string(e.Result))
	assert.Nil(t, e.Error)

	e, ok = ReadEnvelope([]byte(`{"id":1,"method":null,"error":{"code":-32601}}`))
	require.True(t, ok)
	assert.Empty(t, e.Method)
	assert.Equal(t, `{"code":-32601}`, string(e.Error))

	for _, bad := range []string{`{"method":7}`, `[1]`, `{"id":`, ``} {
		_, ok := ReadEnvelope([]byte(bad))
		assert.False(t, ok, bad)
	}
}
