package jsonx

import (
	"reflect"
	"strconv"
	"strings"
)

// The entry points and per-member shapes that every generated type would
// otherwise spell out in full: the JSON methods of objects and enums, the
// direct decode of a member with no rule, and members' schema defaults.
// Each is one call in the generated code; the work is written here once.

// Unmarshal is the UnmarshalJSON of a generated object *x (x a pointer to
// it): data is validated and copied (see Own), *x reset, then data decoded
// by decode, the object's decodeAt, which must consume all of it. The reset
// is reflect's, so that no generated method spells it out (issue #14).
func Unmarshal(data []byte, x any, decode func([]byte, []string) (int, error)) error {
	if err := Own(&data); err != nil {
		return err
	}
	reflect.ValueOf(x).Elem().SetZero()
	_, err := decode(data, nil)
	return err
}

// UnmarshalValue is the UnmarshalJSON of a generated scalar type (a closed
// enum): data is validated and copied, decoded with dec, and stored in *x
// only when it decoded.
func UnmarshalValue[T any](data []byte, x *T, dec func([]byte) (T, error)) error {
	if err := Own(&data); err != nil {
		return err
	}
	v, err := dec(data)
	if err == nil {
		*x = v
	}
	return err
}

// Marshal is the MarshalJSON of a generated object described by o: its
// members (see Append) in braces, in a new buffer.
func (o *Fields) Marshal(m Members, field func([]byte, int) ([]byte, error), isDefault func(int) bool) ([]byte, error) {
	return Braces(o.Append(append(make([]byte, 0, 256), '{'), "", m, field, isDefault))
}

// AppendObject appends an object described by o, its members (see
// Append) in braces: where a member's or a list item's value is an object.
func (o *Fields) AppendObject(b []byte, m Members, field func([]byte, int) ([]byte, error), isDefault func(int) bool) ([]byte, error) {
	return Braces(o.Append(append(b, '{'), "", m, field, isDefault))
}

// Set decodes the current member, which has no null or leniency rule,
// with dec into *dst. It is small enough to be inlined, and dec, a known
// function at every call site, is then called directly: faster than the
// rule-applying helpers' call through a func value.
func Set[T any](d *Decoder, dst *T, dec func([]byte) (T, error)) {
	if v, err := dec(d.Value()); d.Ok(err) {
		*dst = v
	}
}

// SetString is Set for a string member, or one of a type defined over
// string that only converts: a direct call, where Set calls through a
// func value (the commonest member of every message).
func (d *Decoder) SetString(dst *string) {
	if v, err := String(d.Value()); d.Ok(err) {
		*dst = v
	}
}

// SetAt is Set for a decoder that reads the value from the start of Rest
// and reports its length (a union's), so the value is scanned once.
func SetAt[T any](d *Decoder, dst *T, dec func([]byte) (T, int, error)) {
	if v, n, err := dec(d.Rest()); d.Took(n, err) {
		*dst = v
	}
}

// Defaults gives each member with a schema default that did not arrive
// its default, through set (the object's setDefault), once Finish
// succeeded; like Absent, it notes that the member must stay absent on
// re-encoding.
func (d *Decoder) Defaults(set func(i int)) {
	for miss, i := d.o.defaults&^d.seen, 0; miss != 0; miss, i = miss>>1, i+1 {
		if miss&1 != 0 && d.Absent(i) {
			set(i)
		}
	}
}

// SameField reports whether member i encodes the same through have and
// want (appendField of a value and of one holding the defaults): the
// isDefault of a generated object.
func SameField(have, want func([]byte, int) ([]byte, error), i int) bool {
	h, err1 := have(nil, i)
	w, err2 := want(nil, i)
	return err1 == nil && err2 == nil && string(h) == string(w)
}

// FieldsOf builds the descriptor of the generated object type *p points
// to (p is a nil *T) from its declaration: its members are its exported
// fields with a json name other than "-", in order (a member's index is
// its position among them), and each member's rules are in its acp tag,
// comma-separated: required, default, omit, nullable, onnull, lenient,
// skipinvalid, empty (the Flag of that name) and minlength=N, minitems=N,
// min=N. The generator writes the tags; a malformed one panics, at init.
func FieldsOf(p any) *Fields {
	t := reflect.TypeOf(p).Elem()
	fields := make([]Field, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		fields = append(fields, parseRules(t, sf.Name, name, sf.Tag.Get("acp")))
	}
	return NewFields(fields...)
}

// flagNames are the acp tag's names of the flags.
var flagNames = map[string]Flag{
	"required": Required, "default": HasDefault, "omit": Omit, "nullable": Nullable,
	"onnull": OnNull, "lenient": Lenient, "skipinvalid": SkipInvalid, "empty": Empty,
}

// parseRules is the Field of member name, t's field goName, from its acp
// tag (see FieldsOf).
func parseRules(t reflect.Type, goName, name, tag string) Field {
	f := F(name, 0)
	if tag == "" {
		return f
	}
	for rule := range strings.SplitSeq(tag, ",") {
		key, val, hasVal := strings.Cut(rule, "=")
		n, err := strconv.Atoi(val)
		switch {
		case !hasVal && flagNames[key] != 0:
			f.flags |= flagNames[key]
		case hasVal && err == nil && key == "minlength":
			f.minLength = n
		case hasVal && err == nil && key == "minitems":
			f.minItems = n
		case hasVal && err == nil && key == "min":
			f.min = int64(n)
		default:
			panic("jsonx: " + t.Name() + "." + goName + ": bad acp rule " + strconv.Quote(rule))
		}
	}
	return f
}

// More is Next for an object that keeps its unknown members in m: first
// the member just walked, if no case of the generated switch took it (At
// was not called for it), goes to m (see Extra); skip is the decoder's.
func (d *Decoder) More(m *Members, skip []string) bool {
	if d.i < 0 {
		d.Extra(m, skip)
	}
	d.i = -1
	return d.Next()
}

// UnmarshalVariant is the UnmarshalJSON of a union variant (named name;
// x points to it): it decodes a union value with dec, which must be that
// variant, and copies it to *x. Generic only in the union, so that it is
// instantiated once per union rather than once per variant (issue #14).
func UnmarshalVariant[U any](data []byte, x any, dec func([]byte) (U, error), name string) error {
	if err := Own(&data); err != nil {
		return err
	}
	u, err := dec(TrimSpace(data))
	if err != nil {
		return err
	}
	return setVariant(x, u, name)
}

// UnmarshalMembersVariant is UnmarshalVariant for a variant of a flattened
// union, whose decoder takes the enclosing object's members to skip (none
// for a value decoded on its own).
func UnmarshalMembersVariant[U any](data []byte, x any, dec func([]byte, []string) (U, error), name string) error {
	return UnmarshalVariant(data, x, func(data []byte) (U, error) { return dec(data, nil) }, name)
}

// setVariant copies *u to *x when u, a decoded variant, has x's type (both
// are pointers), else fails: the value is not the variant name.
func setVariant(x, u any, name string) error {
	dst, src := reflect.ValueOf(x), reflect.ValueOf(u)
	if src.Type() != dst.Type() || src.IsNil() {
		return Errorf(ErrInvalidValue, "not a "+name)
	}
	dst.Elem().Set(src.Elem())
	return nil
}

// Enum decodes a JSON string that must be one of values, those of the
// closed enum name; the result is the listed value, which does not share
// data's bytes.
func Enum[T ~string](data []byte, name string, values ...T) (T, error) {
	s, err := String(data)
	if err != nil {
		return "", err
	}
	for _, v := range values {
		if string(v) == s {
			return v, nil
		}
	}
	return "", Errorf(ErrInvalidValue, "not a "+name+": "+strconv.Quote(s))
}

// VariantAt decodes a union's object variant v (a new value, as the union
// U) with its decodeAt, dec, from the start of data with skip: v and the
// length, or a nil U and the error.
func VariantAt[U any](v U, dec func([]byte, []string) (int, error), data []byte, skip []string) (U, int, error) {
	n, err := dec(data, skip)
	if err != nil {
		var none U
		return none, 0, err
	}
	return v, n, nil
}

// Keyed is Key for a generated appendField, kept out of line: inlined at
// each of its hundreds of call sites it made acpsdk/gen's compile markedly
// slower (issue #14), for no speed BenchmarkCodec can tell.
//
//go:noinline
func Keyed(b []byte, key string) []byte { return append(Sep(b), key...) }

// KeyedString appends the member key with the string value s, in one call
// for the same reason as Keyed.
//
//go:noinline
func KeyedString(b []byte, key, s string) []byte { return AppendString(append(Sep(b), key...), s) }
