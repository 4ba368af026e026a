package jsonx

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/segmentio/encoding/json"
)

// unescape decodes a quoted JSON string that contains escapes; it has been
// validated by scanString, so segmentio's unescaper cannot fail.
func unescape(quoted []byte) []byte {
	return json.Unescape(quoted)
}

// String decodes a JSON string. An escape-free string is not copied: it
// shares data's bytes, which the decoders' input always allows (see Own);
// an escaped one costs one allocation, the unescaped text.
//
// data is a value span of a validated document.
func String(data []byte) (string, error) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", typeError("string", data)
	}
	body := data[1 : len(data)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return alias(body), nil
	}
	return alias(unescape(data)), nil
}

// alias is b as a string without a copy; b must never be written again.
func alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Own validates data, the input of a public decoding entry point
// (UnmarshalJSON and the like), and replaces it with a private copy: the
// decoders' strings share their input's bytes (see String), and a caller
// may reuse its buffer once the call returns. A decoded value's strings
// then keep that one copy alive, instead of one allocation each.
//
// The connection's trusted decoders skip it: a line it read is validated
// once and never written again, so its decoded strings share the line.
func Own(data *[]byte) error {
	var err error
	*data, err = owned(*data)
	return err
}

// owned is Own's work: data validated and copied, or data and the error.
// Kept out of Own, so that Own is inlined.
//
//go:noinline
func owned(data []byte) ([]byte, error) {
	if err := Validate(data); err != nil {
		return data, err
	}
	return append(make([]byte, 0, len(data)), data...), nil
}

// MinLength enforces a schema minLength (in Unicode code points).
func MinLength(s string, n int) error {
	if utf8.RuneCountInString(s) < n {
		return Errorf(ErrInvalidValue, "shorter than "+strconv.Itoa(n)+" characters")
	}
	return nil
}

// MinItems fails a list of n items shorter than the schema's minItems min.
func MinItems(n, min int) error {
	if n < min {
		return Errorf(ErrInvalidValue, "fewer than "+strconv.Itoa(min)+" items")
	}
	return nil
}

// Integer is a Go integer type a schema integer decodes into.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

// Minimum fails an integer v below the schema's minimum min.
func Minimum[T Integer](v T, min int64) error {
	below := v < 0 && int64(v) < min
	if v >= 0 && min >= 0 {
		below = uint64(v) < uint64(min)
	}
	if below {
		return Errorf(ErrInvalidValue, "less than the minimum "+strconv.FormatInt(min, 10))
	}
	return nil
}

// Bool decodes a JSON boolean.
func Bool(data []byte) (bool, error) {
	switch string(data) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, typeError("boolean", data)
}

// isNumber reports whether data is a validated JSON number span.
func isNumber(data []byte) bool {
	if len(data) == 0 || !(data[0] == '-' || data[0] >= '0' && data[0] <= '9') {
		return false
	}
	end, err := scanNumber(data, 0)
	return err == nil && end == len(data)
}

// Int decodes a JSON integer that fits in bits signed bits. A number with a
// fraction or exponent is ErrType; an out-of-range integer is
// ErrInvalidValue. The text is parsed directly, never through float64.
func Int(data []byte, bits int) (int64, error) {
	if !isNumber(data) {
		return 0, typeError("integer", data)
	}
	v, err := strconv.ParseInt(string(data), 10, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, Errorf(ErrInvalidValue, "integer out of range for int"+strconv.Itoa(bits))
		}
		return 0, Errorf(ErrType, "want integer, got "+string(data))
	}
	return v, nil
}

// Uint decodes a non-negative JSON integer that fits in bits bits.
func Uint(data []byte, bits int) (uint64, error) {
	if !isNumber(data) {
		return 0, typeError("integer", data)
	}
	v, err := strconv.ParseUint(string(data), 10, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, Errorf(ErrInvalidValue, "integer out of range for uint"+strconv.Itoa(bits))
		}
		if data[0] == '-' && isInteger(data) {
			return 0, Errorf(ErrInvalidValue, "negative value for unsigned integer")
		}
		return 0, Errorf(ErrType, "want integer, got "+string(data))
	}
	return v, nil
}

func isInteger(data []byte) bool {
	for _, c := range data {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// IsInteger reports whether the number span data has no fraction or exponent.
func IsInteger(data []byte) bool { return isNumber(data) && isInteger(data) }

// Float decodes a JSON number as a float64 (only for schema "number"
// fields; integers never come here).
func Float(data []byte) (float64, error) {
	if !isNumber(data) {
		return 0, typeError("number", data)
	}
	v, err := strconv.ParseFloat(string(data), 64)
	if err != nil {
		return 0, Errorf(ErrInvalidValue, "number out of range")
	}
	return v, nil
}

// Raw copies a validated value span so the decoded value never aliases the
// caller's buffer.
func Raw(data []byte) json.RawMessage {
	data = trimSpace(data)
	out := make([]byte, len(data))
	copy(out, data)
	return out
}

// Object checks that data is a JSON object (for opaque objects such as
// _meta) and copies it.
func Object(data []byte) (json.RawMessage, error) {
	d := trimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		return nil, typeError("object", d)
	}
	return Raw(d), nil
}

// Sep appends the ',' that separates object members or array items, unless
// b ends with the opening bracket. A complete JSON value never ends with '{'
// or '[', so the last byte is enough.
func Sep(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		return append(b, ',')
	}
	return b
}

// AppendString appends s as a JSON string (no HTML escaping).
func AppendString(b []byte, s string) []byte {
	return json.AppendEscape(b, s, 0)
}

// AppendBool appends a JSON boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// AppendInt appends a JSON integer.
func AppendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// AppendUint appends a JSON non-negative integer.
func AppendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// AppendFloat appends a JSON number in the shortest form that round-trips;
// NaN and infinities have no JSON form.
func AppendFloat(b []byte, v float64) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b, EncodeError("", "NaN or infinity")
	}
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, v, format, -1, 64), nil
}

// AppendRaw appends a raw JSON value after checking it is valid, so a
// hand-built RawMessage can never corrupt the output stream. An empty raw
// value encodes as null.
func AppendRaw(b []byte, raw []byte) ([]byte, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return append(b, "null"...), nil
	}
	if err := Validate(raw); err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// AppendObjectMembers appends the members of the JSON object raw (without
// its braces), each preceded by a separator as needed. It is how a union's
// unknown variant re-emits the members it kept next to an enclosing
// object's own members.
func AppendObjectMembers(b []byte, raw []byte) ([]byte, error) {
	var it ObjectIter
	if err := it.Reset(raw); err != nil {
		return b, err
	}
	for it.Next() {
		b = Sep(b)
		b = append(b, it.Member()...)
	}
	return b, it.Err()
}

// Skipped reports whether key is one of the keys claimed by an enclosing
// object or union (its own members and the discriminator), which a
// flattened variant must not treat as unknown.
func Skipped(key []byte, skip []string) bool {
	for _, s := range skip {
		if string(key) == s {
			return true
		}
	}
	return false
}

// EncUnknown appends raw, the object a union's Unknown variant keeps, after
// checking that it would decode as an unknown variant again: a JSON object
// carrying the union's tag. An empty or tagless Raw is an ErrEncode error
// rather than output that does not decode. members appends only the
// object's members (a flattened union's variant part).
func EncUnknown(b []byte, raw []byte, tag string, members bool) ([]byte, error) {
	d := trimSpace(raw)
	if len(d) == 0 || d[0] != '{' {
		return b, EncodeError("", "unknown variant: Raw is not a JSON object")
	}
	if err := Validate(d); err != nil {
		return b, EncodeError("", "unknown variant: Raw: "+err.Error())
	}
	if _, found, err := Tag(d, tag); err != nil || !found {
		return b, EncodeError("", "unknown variant: Raw has no string "+strconv.Quote(tag)+" member")
	}
	if members {
		return AppendObjectMembers(b, d)
	}
	return append(b, d...), nil
}

// Verbatim keeps the bytes an object arrived as when they differ from its
// canonical encoding, for the objects whose members a flattened union
// shares (their order and explicit nulls span the object and its variant,
// which no single layout sees). While the object still encodes as it did
// when decoded, it re-encodes as those bytes.
type Verbatim struct {
	in, canon []byte
}

// Snapshot records data, the object just decoded, if enc (its canonical
// encoder) writes it differently; canonical input records nothing.
func Snapshot(data []byte, enc func([]byte) ([]byte, error)) Verbatim {
	d := trimSpace(data)
	canon, err := enc(nil)
	if err != nil || bytes.Equal(canon, d) {
		return Verbatim{}
	}
	return Verbatim{in: append([]byte(nil), d...), canon: canon}
}

// Append appends the object: the bytes it arrived as if enc still writes
// what it wrote then, else enc's output.
func (v Verbatim) Append(b []byte, enc func([]byte) ([]byte, error)) ([]byte, error) {
	if v.in == nil {
		return enc(b)
	}
	start := len(b)
	b, err := enc(b)
	if err != nil || !bytes.Equal(b[start:], v.canon) {
		return b, err
	}
	return append(b[:start], v.in...), nil
}
