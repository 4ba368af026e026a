package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A union decodes with decode<U>At (by its tag, or by the value's JSON
// shape), wrapped by decode<U> and Unmarshal<U>, and encodes with
// append<U>, a type switch over its variants (append<U>Members for a
// flattened union, whose members sit in an enclosing object).

// unionCodec prints a union's decoders and encoders, the whole-object
// form of a flattened union def that is also a member's type, and the
// canonical encoders of its variants that keep their input verbatim.
func (e *emitter) unionCodec(g *printer, t *Type) error {
	u := t.Union
	if u.Tag != "" {
		e.taggedCodec(g, t)
	} else if err := e.shapeCodec(g, t); err != nil {
		return err
	}
	if u.Flattened && t.Schema != "" {
		// A def flattened into a variant that is also a member's type
		// elsewhere (v2 unstable's StateUpdate): its whole-object form.
		flattenedObjectCodec(g, t)
	}
	variantCanonical(g, t)
	if !u.Flattened {
		g.P(`// Unmarshal%[1]s decodes one %[1]s value.
func Unmarshal%[1]s(data []byte) (%[1]s, error) {
	if err := jsonx.Own(&data); err != nil {
		return nil, err
	}
	return decode%[1]s(jsonx.TrimSpace(data))
}
`, t.Name)
	}
	return nil
}

// flattenedObjectCodec prints the whole-object form of a flattened union:
// append<U>, decode<U>ObjectAt and Unmarshal<U>.
func flattenedObjectCodec(g *printer, t *Type) {
	g.P("// append%[1]s appends v as a JSON object.\nfunc append%[1]s(b []byte, v %[1]s) ([]byte, error) {", t.Name)
	var verbatim []string
	for _, v := range t.Union.Variants {
		if variantKeepsVerbatim(v) {
			verbatim = append(verbatim, fmt.Sprintf("case *%s:\n%s", v.Type.Name, ifSet(appendVerbatim)))
		}
	}
	if len(verbatim) > 0 {
		g.P("switch v := v.(type) {\n%s\n}", strings.Join(verbatim, "\n"))
	}
	g.P(`	b, err := append%[1]sMembers(append(b, '{'), v)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// decode%[1]sObjectAt decodes a whole %[1]s object at the start of data
// (no enclosing object's members to skip); it returns the value's length.
func decode%[1]sObjectAt(data []byte) (%[1]s, int, error) {
	return decode%[1]sAt(data, nil)
}

// Unmarshal%[1]s decodes one %[1]s value.
func Unmarshal%[1]s(data []byte) (%[1]s, error) {
	if err := jsonx.Validate(data); err != nil {
		return nil, err
	}
	return decode%[1]s(jsonx.TrimSpace(data), nil)
}
`, t.Name)
}

// taggedCodec prints the decoder of a tagged union (one scan finds the
// tag, then only that variant is decoded), its exact-span wrapper and its
// encoder.
func (e *emitter) taggedCodec(g *printer, t *Type) {
	u := t.Union
	params, sk := unionParams(t)
	g.P(`// tag%[1]s lists the discriminator, which variants must not keep as unknown.
var tag%[1]s = []string{%[2]q}
// decode%[1]sAt reads the %[2]q tag with one scan, then decodes only that
// variant, from the start of data; it returns the value's length.
func decode%[1]sAt(%[3]s) (%[1]s, int, error) {
	tag, ok, err := jsonx.Tag(data, %[2]q)`, t.Name, u.Tag, params)
	if u.LenientTag {
		// A tag that is not a string (null, malformed) selects the untagged
		// branch, decoded keeping the member so it re-encodes verbatim.
		g.P(`if err != nil {
	if !errors.Is(err, jsonx.ErrType) {
		return nil, 0, err
	}
	{
		%s
	}
}`, decodeVariant(t, u.Fallback, "skip"))
	} else {
		g.P("if err != nil {\nreturn nil, 0, err\n}")
	}
	g.P("vskip := tag%s", t.Name)
	if u.Flattened {
		g.P("if len(skip) > 0 {\nvskip = jsonx.Extend(skip, %q)\n}", u.Tag)
	}
	if u.Fallback != nil {
		g.P("if !ok {\n%s\n}", decodeVariant(t, u.Fallback, "vskip"))
	} else {
		g.P("if !ok {\nreturn nil, 0, jsonx.Missing(%q)\n}", u.Tag)
	}
	g.P("switch string(tag) {")
	for _, v := range u.Variants {
		if v.Tag != "" {
			g.P("case %q:\n%s", v.Tag, decodeVariant(t, v, "vskip"))
		}
	}
	if u.Fallback != nil {
		// The untagged branch named by its title: decoded without
		// skipping the tag, which it keeps as a member of its own, so the
		// object re-encodes byte for byte.
		g.P("case %q:\n%s", u.FallbackTag, decodeVariant(t, u.Fallback, sk))
	}
	g.P("}")
	unknownTag(g, t)
	unionWrapper(g, t)
	taggedEncoder(g, t)
}

// unionParams are the parameters of a union's decoders, and the skip list
// to pass on: a flattened union skips the members of its encloser.
func unionParams(t *Type) (params, skip string) {
	if t.Union.Flattened {
		return "data []byte, skip []string", "skip"
	}
	return "data []byte", "nil"
}

// unknownTag ends a tagged union's decoder: an unknown tag gives the
// Unknown variant, which keeps the raw object.
func unknownTag(g *printer, t *Type) {
	g.P("n, err := jsonx.Skip(data)\nif err != nil {\nreturn nil, 0, err\n}")
	if t.Union.Flattened {
		g.P(`// An unknown tag: keep the members that are not the owner's.
raw, err := jsonx.ObjectWithout(data[:n], skip)
if err != nil {
	return nil, 0, err
}
return &%s{Raw: raw}, n, nil
}
`, t.Union.Unknown.Name)
		return
	}
	g.P(`// An unknown tag: keep the whole object verbatim.
return &%s{Raw: jsonx.Raw(data[:n])}, n, nil
}
`, t.Union.Unknown.Name)
}

// taggedEncoder prints append<U> (or append<U>Members for a flattened
// union): each variant's members, its tag first.
func taggedEncoder(g *printer, t *Type) {
	u := t.Union
	name, what := "append"+t.Name, "appends v as a JSON object, tag first"
	if u.Flattened {
		name, what = name+"Members", "appends v's members (tag first) to an object being encoded"
	}
	g.P("// %s %s.\nfunc %s(b []byte, v %s) ([]byte, error) {\nswitch v := v.(type) {", name, what, name, t.Name)
	for _, v := range u.Variants {
		recv, tag := variantRecv(v, "v"), fmt.Sprintf("%q", tagMember(v))
		var enc string
		switch {
		case u.Flattened:
			enc = appendMembersOf(structOf(v.Type), recv, "b", tag)
		case variantKeepsVerbatim(v):
			enc = appendVerbatim
		default:
			enc = "jsonx.Braces(" + appendMembersOf(structOf(v.Type), recv, "append(b, '{')", tag) + ")"
		}
		g.P("case *%s:\n%s", v.Type.Name, ifSet(enc))
	}
	g.P("case *%s:\n%s", u.Unknown.Name, ifSet(fmt.Sprintf("jsonx.EncUnknown(b, v.Raw, %q, %t)", u.Tag, u.Flattened)))
	g.P("}\nreturn b, jsonx.EncodeError(\"\", \"nil %s\")\n}\n", t.Name)
}

// unionWrapper prints decodeU, the exact-span form of decodeUAt.
func unionWrapper(g *printer, t *Type) {
	params, args := "data []byte", "data"
	if t.Union.Flattened {
		params, args = "data []byte, skip []string", "data, skip"
	}
	g.P(`// decode%[1]s decodes data, exactly one %[1]s value.
func decode%[1]s(%[2]s) (%[1]s, error) {
	v, _, err := decode%[1]sAt(%[3]s)
	return v, err
}
`, t.Name, params, args)
}

// decodeVariant decodes a struct variant of the union u from data with
// skip list sk (and snapshots it when it keeps its input verbatim).
func decodeVariant(u *Type, v *Variant, sk string) string {
	whole, ok := wholeObject(v.Union)
	if !ok || !variantKeepsVerbatim(v) {
		return fmt.Sprintf("v := new(%s)\nreturn jsonx.VariantAt[%s](v, %s.decodeAt, data, %s)", v.Type.Name, u.Name, variantRecv(v, "v"), sk)
	}
	snap := "v.verbatim = jsonx.Snapshot(data[:n], v.appendCanonical)"
	if whole != "" {
		snap = fmt.Sprintf("if %s {\n%s\n}", whole, snap)
	}
	return fmt.Sprintf(`v := new(%s)
n, err := %s.decodeAt(data, %s)
if err != nil {
	return nil, 0, err
}
%s
return v, n, nil`, v.Type.Name, variantRecv(v, "v"), sk, snap)
}

// wholeObject is when a union's decoder decodes a whole object, for the
// snapshot of a variant that keeps its input verbatim: always (""), unless
// the union is flattened; then only in its whole-object form (a def that
// is also a member's type), where skip is empty. ok is false when it never
// does (an inline flattened union).
func wholeObject(t *Type) (whole string, ok bool) {
	switch {
	case !t.Union.Flattened:
		return "", true
	case t.Schema != "":
		return "len(skip) == 0", true
	}
	return "", false
}

// variantCanonical prints appendCanonical for each variant of union t that
// keeps its input verbatim: the variant as a whole object, in canonical
// order (its tag first), which the snapshot is compared with.
func variantCanonical(g *printer, t *Type) {
	if _, ok := wholeObject(t); !ok {
		return
	}
	for _, v := range t.Union.Variants {
		if !variantKeepsVerbatim(v) {
			continue
		}
		members := appendMembersOf(structOf(v.Type), variantRecv(v, "x"), "append(b, '{')", fmt.Sprintf("%q", tagMember(v)))
		g.P(`// appendCanonical appends x as a whole %s object, in canonical order.
func (x *%s) appendCanonical(b []byte) ([]byte, error) {
	return jsonx.Braces(%s)
}
`, t.Name, v.Type.Name, members)
	}
}

// appendVerbatim appends the variant v kept verbatim, as a whole object.
const appendVerbatim = "v.verbatim.Append(b, v.appendCanonical)"

// ifSet returns enc, the encoding of v, a variant's pointer, unless v is
// nil (the union's encoder then fails).
func ifSet(enc string) string { return "if v != nil {\nreturn " + enc + "\n}" }

// tagMember is a tagged variant's rendered discriminator member
// ("kind":"circle"), or "" for a variant without a tag.
func tagMember(v *Variant) string {
	if v.Tag == "" {
		return ""
	}
	k, _ := json.Marshal(v.Union.Union.Tag)
	val, _ := json.Marshal(v.Tag)
	return string(k) + ":" + string(val)
}

// variantJSON prints the JSON methods of a union variant: they speak the
// union's form, with the tag.
func variantJSON(g *printer, t *Type) {
	v := t.VariantOf[0]
	u := v.Union
	if len(t.VariantOf) > 1 {
		panic("type " + t.Name + " is a variant of two unions")
	}
	marshal := fmt.Sprintf("return append%s(make([]byte, 0, 256), &x)", u.Name)
	if u.Union.Flattened && u.Schema == "" {
		// An inline flattened union has no whole-object form: the
		// variant's members alone.
		marshal = fmt.Sprintf(`b, err := append%sMembers([]byte{'{'}, &x)
if err != nil {
	return nil, err
}
return append(b, '}'), nil`, u.Name)
	}
	unmarshal := "UnmarshalVariant"
	if u.Union.Flattened {
		unmarshal = "UnmarshalMembersVariant"
	}
	g.P(`// MarshalJSON encodes x as a %[1]s value.
func (x %[2]s) MarshalJSON() ([]byte, error) {
	%[3]s
}

// UnmarshalJSON decodes a %[1]s value that must be this variant.
func (x *%[2]s) UnmarshalJSON(data []byte) error {
	return jsonx.%[4]s(data, x, decode%[1]s, %[2]q)
}
`, u.Name, t.Name, marshal, unmarshal)
}

// unknownCodec prints the JSON methods of a tagged union's Unknown variant.
func unknownCodec(g *printer, t *Type) {
	u := t.VariantOf[0].Union
	g.P(`// MarshalJSON emits Raw, verbatim, after checking it is a JSON object with the %[1]q tag.
func (x %[2]s) MarshalJSON() ([]byte, error) {
	return jsonx.EncUnknown(nil, x.Raw, %[1]q, false)
}

// UnmarshalJSON keeps a copy of any JSON object (it does not check that the %[3]s tag is unknown).
func (x *%[2]s) UnmarshalJSON(data []byte) error {
	raw, err := jsonx.Object(data)
	if err == nil {
		err = jsonx.Validate(raw)
	}
	if err != nil {
		return err
	}
	x.Raw = raw
	return nil
}
`, u.Union.Tag, t.Name, u.Name)
}

// sharesMembers: an object whose members a flattened union shares. No
// layout spans its members and its union's, so it keeps non-canonical input
// verbatim (a jsonx.Verbatim field), snapshotted by whoever decodes the
// whole object: itself (keepsVerbatim), or the union it is a variant of
// (variantKeepsVerbatim).
func sharesMembers(t *Type) bool { return t.Kind == TStruct && t.Flat != nil }

// keepsVerbatim: an object sharing its members with a flattened union,
// encoded on its own (not as another union's variant), snapshots its input
// itself when it decodes a whole object (no enclosing members to skip).
func keepsVerbatim(t *Type) bool { return sharesMembers(t) && len(t.VariantOf) == 0 }

// variantKeepsVerbatim: a union variant whose object shares its members
// with a flattened union (v2's SessionUpdateStateUpdate holding StateUpdate,
// whose IdleStateUpdate holds its stopReason): only the union that decodes
// the whole object sees all of it, tags included, so it snapshots it there
// and its whole-object encoder re-emits it while the value still encodes
// the same. A shape union's variant that keeps itself verbatim needs no
// help (it has no tag).
func variantKeepsVerbatim(v *Variant) bool {
	st := structOf(v.Type)
	return sharesMembers(st) && (v.Union.Union.Tag != "" || !keepsVerbatim(st))
}

// structOf is the struct behind a variant type (itself, or the struct a
// defined variant is based on).
func structOf(t *Type) *Type {
	if t.Kind == TDefined {
		return t.Base
	}
	return t
}

// variantRecv is how to reach a struct variant's own codec methods.
func variantRecv(v *Variant, id string) string {
	if v.Type.Kind == TDefined {
		return fmt.Sprintf("(*%s)(%s)", v.Type.Base.Name, id)
	}
	return id
}
