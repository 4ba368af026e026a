package normalize

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
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
