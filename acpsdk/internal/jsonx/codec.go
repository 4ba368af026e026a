package jsonx

import (
	"sort"

	"github.com/segmentio/encoding/json"
)

// Decoder and encoder functions with uniform signatures, so generated code
// can pass them to List, Map, EncList and EncMap.

// Int32 decodes a JSON integer into an int32.
func Int32(data []byte) (int32, error) { v, err := Int(data, 32); return int32(v), err }

// Int64 decodes a JSON integer into an int64.
func Int64(data []byte) (int64, error) { return Int(data, 64) }

// Uint16 decodes a non-negative JSON integer into a uint16.
func Uint16(data []byte) (uint16, error) { v, err := Uint(data, 16); return uint16(v), err }

// Uint32 decodes a non-negative JSON integer into a uint32.
func Uint32(data []byte) (uint32, error) { v, err := Uint(data, 32); return uint32(v), err }

// Uint64 decodes a non-negative JSON integer into a uint64.
func Uint64(data []byte) (uint64, error) { return Uint(data, 64) }

// RawValue copies any JSON value verbatim.
func RawValue(data []byte) (json.RawMessage, error) { return Raw(data), nil }

// ListOf decodes a JSON array with dec for each item. With skipInvalid
// (x-deserialize-skip-invalid-items) an item that fails to decode is
// dropped and the rest kept; otherwise the first failure is returned with
// its index in the path. An empty array decodes to a non-nil empty slice.
func ListOf[T any](data []byte, skipInvalid bool, dec func([]byte) (T, error)) ([]T, error) {
	var it ArrayIter
	if err := it.Reset(data); err != nil {
		return nil, err
	}
	out := make([]T, 0, 4)
	for it.Next() {
		v, err := dec(it.Value())
		if err != nil {
			if skipInvalid {
				continue
			}
			return nil, AtIndex(err, it.Index())
		}
		out = append(out, v)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// MapOf decodes a JSON object whose member values all decode with dec.
func MapOf[T any](data []byte, dec func([]byte) (T, error)) (map[string]T, error) {
	var it ObjectIter
	if err := it.Reset(data); err != nil {
		return nil, err
	}
	out := map[string]T{}
	for it.Next() {
		v, err := dec(it.Value())
		if err != nil {
			return nil, AtField(err, string(it.Key()))
		}
		out[alias(it.Key())] = v // a key is a slice of data, or unescaped afresh
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// EncString appends a JSON string.
func EncString(b []byte, v string) ([]byte, error) { return AppendString(b, v), nil }

// EncBool appends a JSON boolean.
func EncBool(b []byte, v bool) ([]byte, error) { return AppendBool(b, v), nil }

// EncInt32 appends a JSON integer.
func EncInt32(b []byte, v int32) ([]byte, error) { return AppendInt(b, int64(v)), nil }

// EncInt64 appends a JSON integer.
func EncInt64(b []byte, v int64) ([]byte, error) { return AppendInt(b, v), nil }

// EncUint16 appends a JSON integer.
func EncUint16(b []byte, v uint16) ([]byte, error) { return AppendUint(b, uint64(v)), nil }

// EncUint32 appends a JSON integer.
func EncUint32(b []byte, v uint32) ([]byte, error) { return AppendUint(b, uint64(v)), nil }

// EncUint64 appends a JSON integer.
func EncUint64(b []byte, v uint64) ([]byte, error) { return AppendUint(b, v), nil }

// EncFloat appends a JSON number.
func EncFloat(b []byte, v float64) ([]byte, error) { return AppendFloat(b, v) }

// EncRaw appends a raw JSON value after validating it.
func EncRaw(b []byte, v json.RawMessage) ([]byte, error) { return AppendRaw(b, v) }

// EncObject appends a raw JSON object (such as _meta), checking that it is
// one (or null, which every such member of the schema allows).
func EncObject(b []byte, v json.RawMessage) ([]byte, error) {
	d := trimSpace(v)
	if len(d) == 0 {
		return append(b, "{}"...), nil
	}
	if d[0] != '{' && !IsNull(d) {
		return b, EncodeError("", "not a JSON object")
	}
	return AppendRaw(b, d)
}

// EncList appends a JSON array; a nil slice encodes as [] (the schema has
// no null arrays where this is used; optional ones are omitted by the
// caller).
func EncList[T any](b []byte, list []T, enc func([]byte, T) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = enc(b, v); err != nil {
			return b, AtIndex(err, i)
		}
	}
	return append(b, ']'), nil
}

// EncMap appends a JSON object with keys in sorted order, so output is
// deterministic.
func EncMap[T any](b []byte, m map[string]T, enc func([]byte, T) ([]byte, error)) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = enc(b, m[k]); err != nil {
			return b, AtField(err, k)
		}
	}
	return append(b, '}'), nil
}

// Kind classifies a JSON value by its first byte.
type Kind byte

// The JSON kinds.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// KindOf returns the kind of the (validated) value data.
func KindOf(data []byte) Kind {
	d := trimSpace(data)
	if len(d) == 0 {
		return KindInvalid
	}
	switch c := d[0]; {
	case c == 'n':
		return KindNull
	case c == 't' || c == 'f':
		return KindBool
	case c == '"':
		return KindString
	case c == '[':
		return KindArray
	case c == '{':
		return KindObject
	case c == '-' || c >= '0' && c <= '9':
		return KindNumber
	}
	return KindInvalid
}

// TypeError reports that want was expected where data was found.
func TypeError(want string, data []byte) error { return typeError(want, data) }

// NoneOf reports that an object has none of the members that would pick a
// variant of a union decided by shape.
func NoneOf(keys string) error { return Errorf(ErrMissingField, "want one of "+keys) }

// ObjectWithout returns a copy of the object data without the members named
// in skip: what a flattened union's unknown variant keeps beside its
// enclosing object's own members.
func ObjectWithout(data []byte, skip []string) (json.RawMessage, error) {
	var it ObjectIter
	if err := it.Reset(data); err != nil {
		return nil, err
	}
	out := []byte{'{'}
	for it.Next() {
		if Skipped(it.Key(), skip) {
			continue
		}
		out = Sep(out)
		out = append(out, it.Member()...)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// Extend returns skip plus more, without modifying skip's backing array.
func Extend(skip []string, more ...string) []string {
	out := make([]string, 0, len(skip)+len(more))
	out = append(out, skip...)
	return append(out, more...)
}

// EncFloatNotInt appends a float so that it never reads as a JSON integer
// (1 → 1.0): for a union whose integer and number variants are told apart
// by the text of the value.
func EncFloatNotInt(b []byte, v float64) ([]byte, error) {
	start := len(b)
	b, err := AppendFloat(b, v)
	if err != nil {
		return b, err
	}
	if isInteger(b[start:]) {
		b = append(b, ".0"...)
	}
	return b, nil
}
