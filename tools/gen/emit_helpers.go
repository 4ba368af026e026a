package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The decoders and encoders of values: a generated decodeT/appendT for a
// named type (printed once, at the end of codec.go, for the types the
// codecs used), the jsonx function for a primitive.

// decFunc is a func([]byte) (T, error) value decoding ref (not a list/map):
// a string with a pattern is decoded by its check, match<Name>.
func (e *emitter) decFunc(ref *Ref) string {
	if ref.Pattern != nil {
		return "match" + ref.Pattern.Name
	}
	return e.codecFunc(ref, "dec:", "decode", "")
}

// encFunc is a func([]byte, T) ([]byte, error) value encoding ref.
func (e *emitter) encFunc(ref *Ref) string { return e.codecFunc(ref, "enc:", "append", "Enc") }

// primCodecs names the jsonx function of each primitive, without the "Enc"
// prefix its encoder carries; int and uint add their bit size.
var primCodecs = map[string]string{
	"string": "String", "bool": "Bool", "int": "Int", "uint": "Uint",
	"float": "Float", "raw": "RawValue", "object": "Object",
}

// codecFunc is the decoder or encoder of ref: a generated function for a
// named type (recorded in e.need unless it is a union, which has its own),
// else the jsonx function of the primitive.
func (e *emitter) codecFunc(ref *Ref, needKey, namedPrefix, primPrefix string) string {
	if t := ref.Named; t != nil {
		if t.Kind != TUnion {
			e.need[needKey+t.Name] = t
		}
		return namedPrefix + t.Name
	}
	name, ok := primCodecs[ref.Prim]
	if !ok {
		panic("codecFunc: " + ref.Prim)
	}
	if ref.Prim == "raw" && primPrefix != "" {
		name = "Raw" // the encoder of a raw value is EncRaw
	}
	if ref.Prim == "int" || ref.Prim == "uint" {
		name += fmt.Sprint(ref.Bits)
	}
	return "jsonx." + primPrefix + name
}

// decodeCall decodes the raw value v into ref's Go type: (T, error).
func (e *emitter) decodeCall(ref *Ref, skipInvalid bool, v string) string {
	switch {
	case ref.List:
		return fmt.Sprintf("jsonx.ListOf(%s, %t, %s)", v, skipInvalid, e.decFunc(ref.Elem))
	case ref.Map:
		return fmt.Sprintf("jsonx.MapOf(%s, %s)", v, e.decFunc(ref.Elem))
	}
	return fmt.Sprintf("%s(%s)", e.decFunc(ref), v)
}

// encodeCall appends val, a value of ref's Go type, to b: ([]byte, error).
// ref is a scalar's (never a named type).
func (e *emitter) encodeCall(ref *Ref, val string) string {
	switch {
	case ref.List:
		return fmt.Sprintf("jsonx.EncList(b, %s, %s)", val, e.encFunc(ref.Elem))
	case ref.Map:
		return fmt.Sprintf("jsonx.EncMap(b, %s, %s)", val, e.encFunc(ref.Elem))
	}
	return fmt.Sprintf("%s(b, %s)", e.encFunc(ref), val)
}

// inlineEncode is the allocation-free append of val to buf for strings,
// booleans and integers, which cannot fail: ok is false for other types.
func inlineEncode(ref *Ref, val, buf string) (string, bool) {
	if t := ref.Named; t != nil {
		switch t.Kind {
		case TEnum:
			return fmt.Sprintf("jsonx.AppendString(%s, string(%s))", buf, val), true
		case TIntEnum:
			return fmt.Sprintf("jsonx.AppendInt(%s, int64(%s))", buf, val), true
		case TScalar:
			ref = t.Scalar
		default:
			return "", false
		}
	}
	if ref.List || ref.Map {
		return "", false
	}
	switch ref.Prim {
	case "string", "bool":
		return fmt.Sprintf("jsonx.Append%s(%s, %s(%s))", primCodecs[ref.Prim], buf, ref.Prim, val), true
	case "int":
		return fmt.Sprintf("jsonx.AppendInt(%s, int64(%s))", buf, val), true
	case "uint":
		return fmt.Sprintf("jsonx.AppendUint(%s, uint64(%s))", buf, val), true
	}
	return "", false
}

// patternChecks prints, for each string pattern, its compiled expression
// and the decoder that checks it.
func (e *emitter) patternChecks(g *printer) {
	for _, p := range e.m.Patterns {
		expr := strconv.Quote(p.Expr)
		if strconv.CanBackquote(p.Expr) {
			expr = "`" + p.Expr + "`"
		}
		g.P(`// pattern%[1]s is the pattern of %[2]s.
var pattern%[1]s = regexp.MustCompile(%[3]s)

// match%[1]s decodes a string that must match pattern%[1]s.
func match%[1]s(data []byte) (string, error) {
	s, err := jsonx.String(data)
	if err == nil && !pattern%[1]s.MatchString(s) {
		err = jsonx.Errorf(jsonx.ErrInvalidValue, %[4]q)
	}
	return s, err
}
`, p.Name, p.Where, expr, "does not match the pattern "+p.Expr)
	}
}

// helpers prints the decodeT/appendT functions the codecs referenced.
func (e *emitter) helpers(g *printer) {
	done := map[string]bool{}
	for {
		var keys []string
		for k := range e.need {
			if !done[k] {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return
		}
		sort.Strings(keys)
		for _, k := range keys {
			done[k] = true
			if t := e.need[k]; strings.HasPrefix(k, "dec:") {
				g.P("func decode%[1]s(data []byte) (%[1]s, error) {\n%[2]s\n}\n", t.Name, e.decHelper(t))
			} else {
				g.P("func append%[1]s(b []byte, v %[1]s) ([]byte, error) {\n%[2]s\n}\n", t.Name, e.encHelper(t))
			}
		}
	}
}

// decHelper is the body of decodeT.
func (e *emitter) decHelper(t *Type) string {
	switch t.Kind {
	case TStruct:
		return fmt.Sprintf("var x %s\nerr := jsonx.Length(x.decodeAt(data, nil))\nreturn x, err", t.Name)
	case TEnum:
		if t.Open {
			return fmt.Sprintf("s, err := jsonx.String(data)\nreturn %s(s), err", t.Name)
		}
		vals := []string{"data", fmt.Sprintf("%q", t.Name)}
		for _, v := range t.Values {
			vals = append(vals, v.Go)
		}
		return fmt.Sprintf("return jsonx.Enum(%s)", strings.Join(vals, ", "))
	case TIntEnum:
		return fmt.Sprintf("i, err := jsonx.Int32(data)\nreturn %s(i), err", t.Name)
	case TScalar:
		return fmt.Sprintf("s, err := %s\nreturn %s(s), err", e.decodeCall(t.Scalar, false, "data"), t.Name)
	case TRaw:
		return fmt.Sprintf("return %s(jsonx.Raw(data)), nil", t.Name)
	}
	panic("decHelper: " + t.Name)
}

// encHelper is the body of appendT.
func (e *emitter) encHelper(t *Type) string {
	switch t.Kind {
	case TStruct:
		return "return " + appendObject(t, "v", "b")
	case TEnum, TIntEnum, TScalar:
		if s, ok := inlineEncode(&Ref{Named: t}, "v", "b"); ok {
			return "return " + s + ", nil"
		}
		return "return " + e.encodeCall(t.Scalar, goType(t.Scalar)+"(v)")
	case TRaw:
		return "return jsonx.EncRaw(b, json.RawMessage(v))"
	}
	panic("encHelper: " + t.Name)
}
