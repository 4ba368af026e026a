package jsonx

import (
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"
)

// tagged is declared as the generator writes an object: members with json
// names and acp rules, then a field that is not a member.
type tagged struct {
	Name  string          `acp:"required,minlength=2" json:"name"`
	Tags  []string        `acp:"required,empty,minitems=1" json:"tags"`
	Depth *int32          `acp:"omit,nullable,min=1" json:"depth"`
	Plain bool            `json:"plain"`
	Meta  json.RawMessage `acp:"omit,nullable,lenient" json:"_meta"`
	Extra Members         `json:"-"`
}

// TestFieldsOfReadsTheDeclaration: a descriptor built from struct tags is
// the one NewFields builds from the same rules spelled out.
func TestFieldsOfReadsTheDeclaration(t *testing.T) {
	want := NewFields(
		F("name", Required).MinLength(2),
		F("tags", Required|Empty).MinItems(1),
		F("depth", Omit|Nullable).Min(1),
		F("plain", 0),
		F("_meta", Omit|Nullable|Lenient),
	)
	require.Equal(t, want, FieldsOf((*tagged)(nil)))
}

// TestFieldsOfRejectsABadRule: a tag the generator cannot have written
// stops the program at init, naming the field.
func TestFieldsOfRejectsABadRule(t *testing.T) {
	type bad struct {
		A int `acp:"requird" json:"a"`
	}
	require.PanicsWithValue(t, `jsonx: bad.A: bad acp rule "requird"`, func() { FieldsOf((*bad)(nil)) })
	type badNumber struct {
		A int `acp:"min=x" json:"a"`
	}
	require.Panics(t, func() { FieldsOf((*badNumber)(nil)) })
}

// TestEnumAcceptsOnlyItsValues: the closed enum decoder returns the listed
// value (not a slice of the input) and names the enum in its error.
func TestEnumAcceptsOnlyItsValues(t *testing.T) {
	type color string
	v, err := Enum([]byte(`"red"`), "Color", color("red"), color("blue"))
	require.NoError(t, err)
	require.Equal(t, color("red"), v)
	_, err = Enum([]byte(`"green"`), "Color", color("red"), color("blue"))
	require.EqualError(t, err, `invalid value: not a Color: "green"`)
	require.ErrorIs(t, err, ErrInvalidValue)
}
