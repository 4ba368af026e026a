package jsonkind

import "testing"

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:   "object",
		" \t\r\n[]": "array",
		`"x"`:       "string",
		"true":      "boolean",
		"false":     "boolean",
		"null":      "null",
		"-1.5e3":    "number",
		"0":         "number",
		"":          "nothing",
		" \n ":      "nothing",
	} {
		if got := Of([]byte(in)); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}
