package main

import (
	"encoding/json"
	"fmt"
)

// What one member costs in the codec: its case in decodeAt (fieldDecode),
// its case in appendField (fieldCases), its default in setDefault
// (defaultStmts), and the expressions those are made of. Each is Go source
// text; x is the object, d its jsonx.Decoder, b the buffer encoded into.

// fieldDecode is a member's case in decodeAt: the jsonx helper for its Go
// type, and the member's schema default when the helper says it applies.
func (e *emitter) fieldDecode(f *Field) ([]string, error) {
	x, at := "&x."+f.Go, fmt.Sprintf("d.At(%d)", f.Bit)
	var call string
	switch {
	case f.Ref.List:
		call = fmt.Sprintf("jsonx.List(%s, %s, %s)", at, x, e.decFunc(f.Ref.Elem))
	case f.Ref.Map:
		call = fmt.Sprintf("jsonx.Map(%s, %s, %s)", at, x, e.decFunc(f.Ref.Elem))
	case isStructRef(f.Ref) && f.Ptr:
		call = fmt.Sprintf("jsonx.StructPtr(%s, %s, (*%s).decodeAt)", at, x, f.Ref.Named.Name)
	case isStructRef(f.Ref):
		return structMemberDecode(f, at)
	case !f.Nullable && !f.OnNull && !f.OnError && !f.Ptr && f.MinLength == 0 && f.Ref.Min == nil:
		// No rule to apply: a direct call (the common required member).
		return []string{e.directDecode(f, at)}, nil
	case f.Ref.Named != nil && f.Ref.Named.Kind == TUnion:
		if f.Ptr {
			return nil, fmt.Errorf("a union member held by pointer")
		}
		call = fmt.Sprintf("jsonx.Union(%s, %s, %s)", at, x, unionDecoder(f.Ref.Named))
	case f.MinLength > 0:
		if f.Ptr {
			return nil, fmt.Errorf("minLength on a member held by pointer")
		}
		call = fmt.Sprintf("jsonx.Text(%s, %s, %s)", at, x, e.decFunc(f.Ref))
	case f.Ref.Min != nil && f.Ptr:
		call = fmt.Sprintf("jsonx.IntMinPtr(%s, %s, %s)", at, x, e.decFunc(f.Ref))
	case f.Ref.Min != nil:
		call = fmt.Sprintf("jsonx.IntMin(%s, %s, %s)", at, x, e.decFunc(f.Ref))
	case f.Ptr:
		call = fmt.Sprintf("jsonx.Ptr(%s, %s, %s)", at, x, e.decFunc(f.Ref))
	default:
		call = fmt.Sprintf("jsonx.Value(%s, %s, %s)", at, x, e.decFunc(f.Ref))
	}
	if f.Default != nil && (f.Nullable || f.OnError) {
		// The helper leaves a null or malformed value's default to us.
		return []string{fmt.Sprintf("if !%s {\n%s\n}", call, setDefaultCall(f))}, nil
	}
	return []string{call}, nil
}

// structMemberDecode decodes a struct member in place, called directly:
// through a func value x would escape. At comes first, on its own:
// Consumed reads the index it sets.
func structMemberDecode(f *Field, at string) ([]string, error) {
	call := fmt.Sprintf("d.Consumed(x.%s.decodeAt(d.Rest(), nil))", f.Go)
	switch {
	case f.Nullable && f.Default == nil:
		return nil, fmt.Errorf("a nullable object member without a default must be a pointer")
	case f.Nullable:
		call = "d.Null() || !" + call
	case f.OnError:
		call = "!" + call
	default:
		return []string{at, call}, nil
	}
	return []string{at, fmt.Sprintf("if %s {\n%s\n}", call, setDefaultCall(f))}, nil
}

// directDecode decodes a member with no rule to apply.
func (e *emitter) directDecode(f *Field, at string) string {
	x := "&x." + f.Go
	if u := f.Ref.Named; u != nil && u.Kind == TUnion {
		return fmt.Sprintf("jsonx.SetAt(%s, %s, %s)", at, x, unionDecoder(u))
	}
	if isStringish(f.Ref) {
		// The common member: a call the compiler can make directly,
		// which a func value given to Set is not.
		if f.Ref.Named != nil {
			x = "(*string)(" + x + ")"
		}
		return fmt.Sprintf("%s.SetString(%s)", at, x)
	}
	return fmt.Sprintf("jsonx.Set(%s, %s, %s)", at, x, e.decFunc(f.Ref))
}

// fieldCases are a member's cases in appendField's switch on i (and on
// whether the member is set): each returns ([]byte, error). Every encoder
// is called directly, so that x does not escape.
func (e *emitter) fieldCases(f *Field) []string {
	x := "x." + f.Go
	at := fmt.Sprintf("i == %d", f.Bit)
	if omittable(f) {
		at += " && " + x + " != nil"
	}
	keyed := fmt.Sprintf("jsonx.Keyed(b, %s)", keyLit(f.JSON))
	ret := func(s string) []string { return []string{fmt.Sprintf("case %s:\nreturn %s", at, s)} }
	val := x
	if f.Ptr && !isStructRef(f.Ref) {
		val = "*" + x
	}
	switch {
	case f.Ref.List:
		return ret(fmt.Sprintf("jsonx.EncList(%s, %s, %s)", keyed, x, e.encFunc(f.Ref.Elem)))
	case f.Ref.Map:
		return ret(fmt.Sprintf("jsonx.EncMap(%s, %s, %s)", keyed, x, e.encFunc(f.Ref.Elem)))
	case isStructRef(f.Ref):
		return ret(appendObject(f.Ref.Named, x, keyed))
	case f.Ref.Named != nil && f.Ref.Named.Kind == TUnion:
		enc := ret(fmt.Sprintf("append%s(%s, %s)", f.Ref.Named.Name, keyed, x))
		if omittable(f) {
			return enc
		}
		// A required union must be set.
		return append([]string{fmt.Sprintf("case i == %d && %s == nil:\nreturn b, jsonx.NilUnion()", f.Bit, x)}, enc...)
	case isStringRef(f.Ref):
		return ret(fmt.Sprintf("jsonx.KeyedString(b, %s, string(%s)), nil", keyLit(f.JSON), val))
	}
	if s, ok := inlineEncode(f.Ref, val, keyed); ok {
		return ret(s + ", nil")
	}
	return ret(fmt.Sprintf("%s(%s, %s)", e.encFunc(f.Ref), keyed, val))
}

// keyLit is the `"key":` prefix of a member, as a Go string literal.
func keyLit(key string) string {
	k, _ := json.Marshal(key)
	return fmt.Sprintf("%q", string(k)+":")
}

// setDefaultCall sets member f of x to its schema default.
func setDefaultCall(f *Field) string { return fmt.Sprintf("x.setDefault(%d)", f.Bit) }

// defaultStmts set x.F to its schema default.
func (e *emitter) defaultStmts(f *Field) []string {
	x := "x." + f.Go
	lit := compactJSON(f.Default)
	switch {
	case f.Ref.List && lit == "[]", f.Ref.Map && lit == "{}":
		return []string{fmt.Sprintf("%s = %s{}", x, goType(f.Ref))}
	case isStructRef(f.Ref):
		// The generator checked the literal against the schema, so this
		// decode cannot fail.
		return []string{
			fmt.Sprintf("%s = %s{}", x, f.Ref.Named.Name),
			fmt.Sprintf("_, _ = %s.decodeAt([]byte(%q), nil)", x, lit),
		}
	}
	var v any
	if err := json.Unmarshal(f.Default, &v); err != nil {
		panic(err)
	}
	switch v := v.(type) {
	case bool:
		return []string{fmt.Sprintf("%s = %t", x, v)}
	case string:
		if t := f.Ref.Named; t != nil && t.Kind == TEnum {
			for _, ev := range t.Values {
				if ev.Str == v {
					return []string{fmt.Sprintf("%s = %s", x, ev.Go)}
				}
			}
		}
		return []string{fmt.Sprintf("%s = %q", x, v)}
	case float64:
		return []string{fmt.Sprintf("%s = %s", x, floatLit(v))}
	}
	// Anything else: decode the literal (checked by the generator).
	return []string{
		fmt.Sprintf("d, _ := %s", e.decodeCall(f.Ref, false, fmt.Sprintf("[]byte(%q)", lit))),
		x + " = d",
	}
}

// floatLit is a float constant that reads as one (2.0, not 2).
func floatLit(v float64) string {
	s := fmt.Sprintf("%#v", v)
	for _, c := range s {
		if c == '.' || c == 'e' {
			return s
		}
	}
	return s + ".0"
}

// isStringish: a string without a pattern, or a type defined over one
// whose decoder only converts (an open enum, a named string scalar).
func isStringish(ref *Ref) bool {
	if ref.List || ref.Map {
		return false
	}
	if t := ref.Named; t != nil {
		return (t.Kind == TEnum && t.Open) || (t.Kind == TScalar && isStringish(t.Scalar))
	}
	return ref.Prim == "string" && ref.Pattern == nil
}

// isStructRef: a named struct, decoded in place.
func isStructRef(ref *Ref) bool {
	return ref.Named != nil && ref.Named.Kind == TStruct
}

// isStringRef: ref's Go type is a string type (string, an enum, a string
// scalar), encoded as a JSON string.
func isStringRef(ref *Ref) bool {
	if t := ref.Named; t != nil {
		switch t.Kind {
		case TEnum:
			return true
		case TScalar:
			ref = t.Scalar
		default:
			return false
		}
	}
	return !ref.List && !ref.Map && ref.Prim == "string"
}

// omittable: the member is left out of the encoding when nil.
func omittable(f *Field) bool {
	return f.Ptr || (!f.Required && f.Default == nil && (f.Ref.List || f.Ref.Map || isNilable(f.Ref)))
}

func isNilable(ref *Ref) bool {
	if ref.Named != nil {
		return ref.Named.Kind == TUnion || ref.Named.Kind == TRaw
	}
	return ref.Prim == "raw" || ref.Prim == "object"
}

// unionDecoder is the decoder of the union u as a member's whole value:
// func([]byte) (u, int, error). A flattened union's own decoder takes the
// enclosing object's members to skip; as a member's value it has none.
func unionDecoder(u *Type) string {
	if u.Union.Flattened {
		return "decode" + u.Name + "ObjectAt"
	}
	return "decode" + u.Name + "At"
}
