package main

import (
	"fmt"
	"strings"
)

// A union decided by shape (RequestID: null, integer or string;
// EmbeddedResourceResource: an object with "text" or one with "blob")
// switches on the JSON kind of the value, then, between objects (or
// arrays of objects), on the required members only one variant has.

// shapeCodec prints a shape union's decoder, its exact-span wrapper, the
// JSON methods of its scalar variants and its encoder.
func (e *emitter) shapeCodec(g *printer, t *Type) error {
	params, _ := unionParams(t)
	g.P(`// decode%[1]sAt picks the variant from the JSON shape of the value at the
// start of data; it returns the value's length.
func decode%[1]sAt(%[2]s) (%[1]s, int, error) {
	n, err := jsonx.Skip(data)
	if err != nil {
		return nil, 0, err
	}
	data = data[:n]
	switch jsonx.KindOf(data) {`, t.Name, params)
	var want []string
	for _, kind := range shapeKinds(t) {
		body, err := e.shapeCase(t, kind)
		if err != nil {
			return err
		}
		g.P("%s", body)
		want = append(want, kind)
	}
	g.P("}\nreturn nil, 0, jsonx.TypeError(%q, data)\n}\n", strings.Join(want, " or "))
	unionWrapper(g, t)
	e.shapeEncoder(g, t)
	return nil
}

// shapeKinds are the JSON kinds a shape union's variants have, in the
// order the variants first have them; integer and number are one kind,
// number.
func shapeKinds(t *Type) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, v := range t.Union.Variants {
		k := v.JSONKind
		if k == "integer" {
			k = "number"
		}
		if !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// variantsOf are the variants of t of one JSON kind.
func variantsOf(t *Type, kind string) []*Variant {
	var out []*Variant
	for _, v := range t.Union.Variants {
		if v.JSONKind == kind {
			out = append(out, v)
		}
	}
	return out
}

// shapeCase is the decoder's case for one JSON kind.
func (e *emitter) shapeCase(t *Type, kind string) (string, error) {
	vs := variantsOf(t, kind)
	switch kind {
	case "null":
		return fmt.Sprintf("case jsonx.KindNull:\nreturn %s{}, n, nil", vs[0].Type.Name), nil
	case "string":
		return "case jsonx.KindString:\n" + e.scalarVariant(vs[0]), nil
	case "boolean":
		return "case jsonx.KindBool:\n" + e.scalarVariant(vs[0]), nil
	case "number":
		return "case jsonx.KindNumber:\n" + e.numberVariants(t), nil
	case "array":
		// Arrays of different objects: decided by the first item.
		body := ""
		if len(vs) > 1 {
			body = "first, _ := jsonx.FirstItem(data)\n"
			for _, v := range vs {
				body += fmt.Sprintf("if %s {\n%s\n}\n", hasAnyKey("first", v.Keys), e.scalarVariant(v))
			}
		}
		return "case jsonx.KindArray:\n" + body + e.scalarVariant(vs[0]), nil
	case "object":
		_, sk := unionParams(t)
		if len(vs) == 1 {
			return "case jsonx.KindObject:\n" + decodeVariant(t, vs[0], sk), nil
		}
		body, all := "", []string{}
		for _, v := range vs {
			body += fmt.Sprintf("if %s {\n%s\n}\n", hasAnyKey("data", v.Keys), decodeVariant(t, v, sk))
			all = append(all, quoteAll(v.Keys)...)
		}
		return fmt.Sprintf("case jsonx.KindObject:\n%sreturn nil, 0, jsonx.NoneOf(%q)", body, strings.Join(all, ", ")), nil
	}
	return "", fmt.Errorf("%s: shape %s not supported", t.Name, kind)
}

// numberVariants decodes a number: an integer that fits is the integer
// variant, any other number the number variant.
func (e *emitter) numberVariants(t *Type) string {
	iv, nv := variantsOf(t, "integer"), variantsOf(t, "number")
	switch {
	case len(iv) > 0 && len(nv) > 0:
		return fmt.Sprintf(`if jsonx.IsInteger(data) {
	if i, err := %s; err == nil {
		return %s(i), n, nil
	}
}
%s`, e.decodeCall(iv[0].Type.Scalar, false, "data"), iv[0].Type.Name, e.scalarVariant(nv[0]))
	case len(iv) > 0:
		return e.scalarVariant(iv[0])
	}
	return e.scalarVariant(nv[0])
}

// scalarVariant decodes data as the scalar (or array) variant v.
func (e *emitter) scalarVariant(v *Variant) string {
	check := ""
	if n := v.Type.Scalar.MinItems; n > 0 {
		check = fmt.Sprintf("if err == nil {\nerr = jsonx.MinItems(len(s), %d)\n}\n", n)
	}
	return fmt.Sprintf(`s, err := %s
%sif err != nil {
	return nil, 0, err
}
return %s(s), n, nil`, e.decodeCall(v.Type.Scalar, false, "data"), check, v.Type.Name)
}

// hasAnyKey is the test that the object v has one of keys.
func hasAnyKey(v string, keys []string) string {
	var tests []string
	for _, k := range keys {
		tests = append(tests, fmt.Sprintf("jsonx.HasKey(%s, %q)", v, k))
	}
	return strings.Join(tests, " || ")
}

// shapeEncoder prints the scalar variants' MarshalJSON and append<U> (or
// append<U>Members): each variant in its own JSON form.
func (e *emitter) shapeEncoder(g *printer, t *Type) {
	name := "append" + t.Name
	if t.Union.Flattened {
		name += "Members"
	}
	for _, v := range t.Union.Variants {
		if v.Type.Kind == TScalar {
			g.P(`// MarshalJSON encodes x as a %s value.
func (x %s) MarshalJSON() ([]byte, error) {
	return %s(nil, x)
}
`, t.Name, v.Type.Name, name)
		}
	}
	g.P("// %[1]s appends v in its variant's JSON form.\nfunc %[1]s(b []byte, v %[2]s) ([]byte, error) {\nswitch v := v.(type) {", name, t.Name)
	for _, v := range t.Union.Variants {
		g.P("%s", e.shapeVariantEncoder(t, v))
	}
	g.P("}\nreturn b, jsonx.EncodeError(\"\", \"nil %s\")\n}\n", t.Name)
}

// shapeVariantEncoder is the encoder's case for the variant v.
func (e *emitter) shapeVariantEncoder(t *Type, v *Variant) string {
	switch v.JSONKind {
	case "null":
		return fmt.Sprintf("case %s:\nreturn append(b, \"null\"...), nil", v.Type.Name)
	case "object":
		st, recv := structOf(v.Type), variantRecv(v, "v")
		enc := appendObject(st, recv, "b")
		switch {
		case t.Union.Flattened:
			enc = appendMembersOf(st, recv, "b", `""`)
		case variantKeepsVerbatim(v):
			enc = appendVerbatim
		}
		return fmt.Sprintf("case *%s:\n%s", v.Type.Name, ifSet(enc))
	}
	conv := fmt.Sprintf("%s(v)", goType(v.Type.Scalar))
	var enc string
	if v.JSONKind == "number" && len(variantsOf(t, "integer")) > 0 {
		// Keep a number a number: 1.0 must not come back as the integer variant.
		enc = fmt.Sprintf("jsonx.EncFloatNotInt(b, %s)", conv)
	} else if s, ok := inlineEncode(v.Type.Scalar, "v", "b"); ok {
		enc = s + ", nil"
	} else {
		enc = e.encodeCall(v.Type.Scalar, conv)
	}
	return fmt.Sprintf("case %s:\nreturn %s", v.Type.Name, enc)
}
