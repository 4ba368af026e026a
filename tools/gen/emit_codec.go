package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
)

func jx(name string) *jen.Statement { return jen.Qual(jsonxPkg, name) }

// minItemsCheck fails a decoded list v (with err nil so far) that is
// shorter than the schema's minItems n.
func minItemsCheck(v string, n int) *jen.Statement {
	return jen.If(jen.Err().Op("==").Nil()).Block(
		jen.Err().Op("=").Add(jx("MinItems")).Call(jen.Len(jen.Id(v)), jen.Lit(n)),
	)
}

// keyLit is the `"key":` prefix of a member, as a Go string literal.
func keyLit(key string) *jen.Statement {
	k, _ := json.Marshal(key)
	return jen.Lit(string(k) + ":")
}

// decFunc is a func([]byte) (T, error) value decoding ref (not a list/map).
func (e *emitter) decFunc(ref *Ref) *jen.Statement { return e.codecFunc(ref, "dec:", "decode", "") }

// encFunc is a func([]byte, T) ([]byte, error) value encoding ref.
func (e *emitter) encFunc(ref *Ref) *jen.Statement { return e.codecFunc(ref, "enc:", "append", "Enc") }

// primCodecs names the jsonx function of each primitive, without the "Enc"
// prefix its encoder carries; int and uint add their bit size.
var primCodecs = map[string]string{
	"string": "String", "bool": "Bool", "int": "Int", "uint": "Uint",
	"float": "Float", "raw": "RawValue", "object": "Object",
}

// codecFunc is the decoder or encoder of ref: a generated function for a
// named type (recorded in e.need unless it is a union, which has its own),
// else the jsonx function of the primitive.
func (e *emitter) codecFunc(ref *Ref, needKey, namedPrefix, primPrefix string) *jen.Statement {
	if t := ref.Named; t != nil {
		if t.Kind != TUnion {
			e.need[needKey+t.Name] = t
		}
		return jen.Id(namedPrefix + t.Name)
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
	return jx(primPrefix + name)
}

// decodeCall decodes the raw value v into ref's Go type: (T, error).
func (e *emitter) decodeCall(ref *Ref, skipInvalid bool, v jen.Code) *jen.Statement {
	switch {
	case ref.List:
		return jx("ListOf").Call(v, jen.Lit(skipInvalid), e.decFunc(ref.Elem))
	case ref.Map:
		return jx("MapOf").Call(v, e.decFunc(ref.Elem))
	}
	return e.decFunc(ref).Call(v)
}

// encodeCall appends val: ([]byte, error).
func (e *emitter) encodeCall(ref *Ref, val jen.Code) *jen.Statement {
	switch {
	case ref.List:
		return jx("EncList").Call(jen.Id("b"), val, e.encFunc(ref.Elem))
	case ref.Map:
		return jx("EncMap").Call(jen.Id("b"), val, e.encFunc(ref.Elem))
	}
	if ref.Named != nil {
		switch t := ref.Named; t.Kind {
		case TStruct:
			return appendObject(t, jen.Parens(val), jen.Id("b"))
		case TUnion:
			return jen.Id("append"+t.Name).Call(jen.Id("b"), val)
		}
	}
	return e.encFunc(ref).Call(jen.Id("b"), val)
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

// snapshotVariant is the statement that records, for a variant that keeps
// its input verbatim, the object v just decoded from data[:n]; whole says
// when the union's decoder is given a whole object (nil: always).
func snapshotVariant(v *Variant, whole jen.Code) jen.Code {
	if !variantKeepsVerbatim(v) {
		return jen.Null()
	}
	snap := jen.Id("v").Dot("verbatim").Op("=").Add(jx("Snapshot")).Call(jen.Id("data").Index(jen.Empty(), jen.Id("n")), jen.Id("v").Dot("appendCanonical"))
	if whole == nil {
		return snap
	}
	return jen.If(whole).Block(snap)
}

// wholeObject is when a union's decoder decodes a whole object, for
// snapshotVariant: always, unless the union is flattened; then only in its
// whole-object form (a def that is also a member's type), where skip is empty.
// ok is false when it never does (an inline flattened union).
func wholeObject(t *Type) (whole jen.Code, ok bool) {
	switch {
	case !t.Union.Flattened:
		return nil, true
	case t.Schema != "":
		return jen.Len(jen.Id("skip")).Op("==").Lit(0), true
	}
	return nil, false
}

// variantCanonical emits appendCanonical for each variant of union t that
// keeps its input verbatim: the variant as a whole object, in canonical
// order (its tag first), which the snapshot is compared with.
func (e *emitter) variantCanonical(f *jen.File, t *Type) {
	if _, ok := wholeObject(t); !ok {
		return
	}
	for _, v := range t.Union.Variants {
		if !variantKeepsVerbatim(v) {
			continue
		}
		f.Comment(fmt.Sprintf("appendCanonical appends x as a whole %s object, in canonical order.", t.Name))
		f.Func().Params(jen.Id("x").Op("*").Id(v.Type.Name)).Id("appendCanonical").Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jx("Braces").Call(appendMembersOf(structOf(v.Type), func() *jen.Statement { return variantRecv(v, "x") }, jen.Append(jen.Id("b"), jen.LitRune('{')), jen.Lit(tagMember(v))))),
		)
		f.Line()
	}
}

// appendVerbatim returns the variant v kept verbatim, as a whole object.
func appendVerbatim() *jen.Statement {
	return jen.Id("v").Dot("verbatim").Dot("Append").Call(jen.Id("b"), jen.Id("v").Dot("appendCanonical"))
}

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

// isStringish: a string, or a type defined over one whose decoder only
// converts (an open enum, a named string scalar).
func isStringish(ref *Ref) bool {
	if ref.List || ref.Map {
		return false
	}
	if t := ref.Named; t != nil {
		return (t.Kind == TEnum && t.Open) || (t.Kind == TScalar && t.Scalar.Prim == "string" && !t.Scalar.List && !t.Scalar.Map)
	}
	return ref.Prim == "string"
}

// isStructRef: a named struct, decoded in place.
func isStructRef(ref *Ref) bool {
	return ref.Named != nil && ref.Named.Kind == TStruct
}

// zeroStmt sets x.F to its zero value.
func zeroStmt(f *Field) *jen.Statement {
	x := jen.Id("x").Dot(f.Go)
	if (f.Ref.List || f.Ref.Map) && f.Required {
		// Always encoded, as [] or {}: the zero must be the empty
		// collection so that decode → encode → decode is stable.
		return x.Op("=").Add(goType(f.Ref)).Values()
	}
	if f.Ptr || f.Ref.List || f.Ref.Map {
		return x.Op("=").Nil()
	}
	if f.Ref.Named != nil {
		switch t := f.Ref.Named; t.Kind {
		case TStruct:
			return x.Op("=").Id(t.Name).Values()
		case TUnion, TRaw:
			return x.Op("=").Nil()
		case TEnum:
			return x.Op("=").Lit("")
		case TIntEnum:
			return x.Op("=").Lit(0)
		case TScalar:
			return zeroPrim(x, t.Scalar)
		}
	}
	return zeroPrim(x, f.Ref)
}

func zeroPrim(x *jen.Statement, ref *Ref) *jen.Statement {
	switch ref.Prim {
	case "string":
		return x.Op("=").Lit("")
	case "bool":
		return x.Op("=").False()
	case "raw", "object":
		return x.Op("=").Nil()
	}
	if ref.List || ref.Map {
		return x.Op("=").Nil()
	}
	return x.Op("=").Lit(0)
}

// defaultStmts set x.F to its schema default (or zero without one).
func (e *emitter) defaultStmts(f *Field) []jen.Code {
	if f.Default == nil {
		return []jen.Code{zeroStmt(f)}
	}
	x := jen.Id("x").Dot(f.Go)
	lit := compactJSON(f.Default)
	switch {
	case f.Ref.List && lit == "[]":
		return []jen.Code{x.Op("=").Add(goType(f.Ref)).Values()}
	case f.Ref.Map && lit == "{}":
		return []jen.Code{x.Op("=").Add(goType(f.Ref)).Values()}
	case isStructRef(f.Ref):
		// The generator checked the literal against the schema, so this
		// decode cannot fail.
		return []jen.Code{
			x.Clone().Op("=").Id(f.Ref.Named.Name).Values(),
			jen.List(jen.Id("_"), jen.Id("_")).Op("=").Add(x.Clone()).Dot("decodeAt").Call(jen.Index().Byte().Call(jen.Lit(lit)), jen.Nil()),
		}
	}
	var v any
	if err := json.Unmarshal(f.Default, &v); err != nil {
		panic(err)
	}
	switch v := v.(type) {
	case bool:
		return []jen.Code{x.Op("=").Lit(v)}
	case string:
		if t := f.Ref.Named; t != nil && t.Kind == TEnum {
			for _, ev := range t.Values {
				if ev.Str == v {
					return []jen.Code{x.Op("=").Id(ev.Go)}
				}
			}
		}
		return []jen.Code{x.Op("=").Lit(v)}
	case float64:
		return []jen.Code{x.Op("=").Lit(v)}
	}
	// Anything else: decode the literal (checked by the generator).
	return []jen.Code{
		jen.List(jen.Id("d"), jen.Id("_")).Op(":=").Add(e.decodeCall(f.Ref, false, jen.Index().Byte().Call(jen.Lit(lit)))),
		x.Op("=").Id("d"),
	}
}

func (e *emitter) codecs(f *jen.File) error {
	e.descriptors(f)
	for _, t := range e.m.Types {
		switch t.Kind {
		case TStruct:
			if t.IsUnknown {
				e.unknownCodec(f, t)
				continue
			}
			if err := e.structCodec(f, t); err != nil {
				return err
			}
		case TDefined:
			e.variantJSON(f, t)
		case TUnion:
			if err := e.unionCodec(f, t); err != nil {
				return err
			}
		case TEnum:
			if !t.Open {
				f.Comment("UnmarshalJSON accepts only the listed values.")
				f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
					jen.Return(jx("UnmarshalValue").Call(jen.Id("data"), jen.Id("x"), jen.Id("decode"+t.Name))),
				)
				e.need["dec:"+t.Name] = t
			}
		case TNull:
			f.Comment("MarshalJSON encodes null.")
			f.Func().Params(jen.Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jen.Index().Byte().Call(jen.Lit("null")), jen.Nil()),
			)
			f.Comment("UnmarshalJSON accepts only null.")
			f.Func().Params(jen.Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
				jen.If(jen.Op("!").Add(jx("IsNull")).Call(jen.Id("data"))).Block(
					jen.Return(jx("TypeError").Call(jen.Lit("null"), jen.Id("data"))),
				),
				jen.Return(jen.Nil()),
			)
		case TRaw:
			f.Comment("MarshalJSON emits the raw value after checking it is valid JSON (null when empty).")
			f.Func().Params(jen.Id("x").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jx("EncRaw").Call(jen.Nil(), jen.Qual(segJSON, "RawMessage").Call(jen.Id("x")))),
			)
			f.Comment("UnmarshalJSON keeps a copy of the value.")
			f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
				jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				jen.Op("*").Id("x").Op("=").Id(t.Name).Call(jx("Raw").Call(jen.Id("data"))),
				jen.Return(jen.Nil()),
			)
		}
	}
	return nil
}

// structCodec emits an object's descriptor (fieldsT), decodeAt,
// appendField and its JSON methods; the walk itself, both ways, is jsonx's
// (Decoder, Fields.Append), written once.
func (e *emitter) structCodec(f *jen.File, t *Type) error {
	desc := "fields" + t.Name
	for _, fd := range t.Fields {
		if _, err := memberRules(fd); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name, fd.Go, err)
		}
	}

	// decodeAt
	var cases []jen.Code
	for _, fd := range t.Fields {
		stmt, err := e.fieldDecode(fd)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name, fd.Go, err)
		}
		cases = append(cases, jen.Case(jen.Lit(fd.JSON)).Block(stmt...))
	}
	extra := jen.Nil()
	next := jen.Id("d").Dot("Next").Call()
	if !t.NoExtra {
		// A member no case takes is kept in Extra by More.
		extra = jen.Op("&").Id("x").Dot("Extra")
		next = jen.Id("d").Dot("More").Call(jen.Op("&").Id("x").Dot("Extra"), jen.Id("skip"))
	}
	var loop []jen.Code
	if len(cases) > 0 {
		loop = append(loop, jen.Switch(jen.String().Call(jen.Id("d").Dot("Key").Call())).Block(cases...))
	}
	body := []jen.Code{
		jen.Var().Id("d").Qual(jsonxPkg, "Decoder"),
		jen.For(jen.Id("d").Dot("Begin").Call(jen.Id("data"), jen.Id(desc), jen.Id("skip")), next, jen.Empty()).Block(loop...),
	}
	var defaults []jen.Code
	if hasAbsentDefault(t) {
		defaults = append(defaults, jen.Id("d").Dot("Defaults").Call(jen.Id("x").Dot("setDefault")))
	}
	if len(defaults) == 0 && t.Flat == nil {
		body = append(body, jen.Return(jen.Id("d").Dot("End").Call(extra, jen.Id("skip"))))
	} else {
		body = append(body, jen.If(jen.Err().Op(":=").Id("d").Dot("Finish").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())))
		body = append(body, defaults...)
		if !t.NoExtra {
			body = append(body, jen.Id("d").Dot("Layout").Call(extra, jen.Id("skip")))
		}
		if t.Flat != nil {
			u := t.Flat.Ref.Named
			ownVar := "own" + t.Name
			f.Comment(fmt.Sprintf("%s are the members %s decodes itself; the rest belong to its %s.", ownVar, t.Name, t.Flat.Go))
			var lits []jen.Code
			for _, fd := range t.Fields {
				lits = append(lits, jen.Lit(fd.JSON))
			}
			f.Var().Id(ownVar).Op("=").Index().String().Values(lits...)
			body = append(body,
				jen.Id("uskip").Op(":=").Id(ownVar),
				jen.If(jen.Len(jen.Id("skip")).Op(">").Lit(0)).Block(
					jen.Id("uskip").Op("=").Add(jx("Extend")).Call(jen.Id("skip"), jen.Id(ownVar).Op("...")),
				),
				jen.List(jen.Id("u"), jen.Err()).Op(":=").Id("decode"+u.Name).Call(jen.Id("d").Dot("Data").Call(), jen.Id("uskip")),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())),
				jen.Id("x").Dot(t.Flat.Go).Op("=").Id("u"),
			)
			if keepsVerbatim(t) {
				// Only a whole object: with members to skip, it is a union's
				// variant or part of an enclosing object, which keep it.
				body = append(body, jen.If(jen.Len(jen.Id("skip")).Op("==").Lit(0)).Block(
					jen.Id("x").Dot("verbatim").Op("=").Add(jx("Snapshot")).Call(jen.Id("d").Dot("Data").Call(), jen.Id("x").Dot("appendCanonical")),
				))
			}
		}
		body = append(body, jen.Return(jen.Id("d").Dot("Len").Call(), jen.Nil()))
	}
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("decodeAt").Params(jen.Id("data").Index().Byte(), jen.Id("skip").Index().String()).Params(jen.Int(), jen.Error()).Block(body...)
	f.Line()

	// appendField
	field := jen.Id("x").Dot("appendField")
	if len(t.Fields) == 0 {
		field = jen.Nil()
	} else {
		var fieldCases []jen.Code
		for _, fd := range t.Fields {
			fieldCases = append(fieldCases, e.fieldCases(fd)...)
		}
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendField").Params(jen.Id("b").Index().Byte(), jen.Id("i").Int()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Switch().Block(fieldCases...),
			jen.Return(jen.Id("b"), jen.Nil()),
		)
		f.Line()
	}
	if err := e.setDefault(f, t); err != nil {
		return err
	}
	isDefault := jen.Nil()
	if hasIsDefault(t) {
		// Member i encoded as it is and as its default (scratch value d).
		isDefault = jen.Id("x").Dot("isDefault")
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("isDefault").Params(jen.Id("i").Int()).Bool().Block(
			jen.Var().Id("d").Id(t.Name),
			jen.Id("d").Dot("setDefault").Call(jen.Id("i")),
			jen.Return(jx("SameField").Call(jen.Id("x").Dot("appendField"), jen.Id("d").Dot("appendField"), jen.Id("i"))),
		)
		f.Line()
	}
	members := jen.Qual(jsonxPkg, "Members").Values()
	if !t.NoExtra {
		members = jen.Id("x").Dot("Extra")
	}
	appendCall := jen.Id(desc).Dot("Append")
	if t.Flat != nil {
		// The flattened union's members go between the object's own and
		// Extra, so the known members are appended without Extra.
		u := t.Flat.Ref.Named
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendMembers").Params(jen.Id("b").Index().Byte(), jen.Id("tag").String()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.If(jx("HasLayout").Call(members)).Block(
				jen.Return(appendCall.Clone().Call(jen.Id("b"), jen.Id("tag"), members, field, isDefault)),
			),
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(appendCall.Clone()).Call(jen.Id("b"), jen.Id("tag"), jen.Qual(jsonxPkg, "Members").Values(), field, jen.Nil()),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err())),
			jen.If(jen.Id("x").Dot(t.Flat.Go).Op("==").Nil()).Block(
				jen.Return(jen.Id("b"), jx("EncodeError").Call(jen.Lit(""), jen.Lit(t.Name+"."+t.Flat.Go+" is nil"))),
			),
			jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Id("append"+u.Name+"Members").Call(jen.Id("b"), jen.Id("x").Dot(t.Flat.Go)), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Id("b"), jen.Err()),
			),
			jen.Return(jx("AppendMembers").Call(jen.Id("b"), members), jen.Nil()),
		)
	}
	f.Line()
	appendObj := "appendJSON"
	if keepsVerbatim(t) {
		appendObj = "appendCanonical"
		f.Comment("appendJSON appends x as it arrived while it is unchanged.")
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendJSON").Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jen.Id("x").Dot("verbatim").Dot("Append").Call(jen.Id("b"), jen.Id("x").Dot("appendCanonical"))),
		)
		f.Line()
	}
	if keepsVerbatim(t) {
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id(appendObj).Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jx("Braces").Call(appendMembersOf(t, func() *jen.Statement { return jen.Id("x") }, jen.Append(jen.Id("b"), jen.LitRune('{')), jen.Lit("")))),
		)
		f.Line()
	}
	if len(t.VariantOf) > 0 {
		e.variantJSON(f, t)
		return nil
	}
	f.Comment("MarshalJSON encodes x: known members in schema order, then Extra.")
	marshal := appendObject(t, jen.Id("x"), jen.Make(jen.Index().Byte(), jen.Lit(0), jen.Lit(256)))
	if !keepsVerbatim(t) && t.Flat == nil {
		marshal = marshalCall(t, jen.Id("x"))
	}
	f.Func().Params(jen.Id("x").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(marshal),
	)
	f.Line()
	f.Comment("UnmarshalJSON checks that data is valid JSON, then decodes it into x, replacing its contents.")
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.Return(jx("Unmarshal").Call(jen.Id("data"), jen.Id("x"), jen.Id("x").Dot("decodeAt"))),
	)
	f.Line()
	return nil
}

// setDefault emits the method that sets member i of t to its schema
// default, the one place the default is spelled out: for a member that
// arrived absent (Decoder.Defaults), null or malformed, and for isDefault.
func (e *emitter) setDefault(f *jen.File, t *Type) error {
	var cases []jen.Code
	for _, fd := range t.Fields {
		if fd.Default != nil {
			cases = append(cases, jen.Case(jen.Lit(fd.Bit)).Block(e.defaultStmts(fd)...))
		}
	}
	if len(cases) == 0 {
		return nil
	}
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("setDefault").Params(jen.Id("i").Int()).Block(
		jen.Switch(jen.Id("i")).Block(cases...),
	)
	f.Line()
	return nil
}

// setDefaultCall sets member f of x to its schema default.
func setDefaultCall(f *Field) *jen.Statement {
	return jen.Id("x").Dot("setDefault").Call(jen.Lit(f.Bit))
}

// hasAbsentDefault: a member that is not required has a schema default,
// which it takes when absent.
func hasAbsentDefault(t *Type) bool {
	for _, fd := range t.Fields {
		if fd.Default != nil && !fd.Required {
			return true
		}
	}
	return false
}

// marshalCall is the whole JSON object of recv, a value of the struct
// type t (neither kept verbatim nor sharing members with a union), in a
// new buffer: ([]byte, error).
func marshalCall(t *Type, recv *jen.Statement) *jen.Statement {
	members, field, isDefault := memberArgs(t, func() *jen.Statement { return recv.Clone() })
	return jen.Id("fields"+t.Name).Dot("Marshal").Call(members, field, isDefault)
}

// memberRules is a member's acp struct tag: the rules jsonx applies to it
// (jsonx.FieldsOf reads them into the object's descriptor), "" for none.
func memberRules(f *Field) (string, error) {
	if !plainKey(f.JSON) {
		return "", fmt.Errorf("member name %q needs escaping in JSON", f.JSON)
	}
	var rules []string
	add := func(on bool, name string) {
		if on {
			rules = append(rules, name)
		}
	}
	add(f.Required, "required")
	add(f.Default != nil, "default")
	add(omittable(f), "omit")
	add(f.Nullable, "nullable")
	add(f.OnNull, "onnull")
	add(f.OnError, "lenient")
	add(f.SkipInvalid, "skipinvalid")
	add((f.Ref.List || f.Ref.Map) && f.Required, "empty")
	if f.OnNull && !f.Ref.List && !f.Ref.Map {
		return "", fmt.Errorf("x-deserialize-default-on-null on a member that is not a list or map")
	}
	if f.MinLength > 0 {
		rules = append(rules, fmt.Sprintf("minlength=%d", f.MinLength))
	}
	if f.Ref.MinItems > 0 {
		if !f.Ref.List {
			return "", fmt.Errorf("minItems on a member that is not a list")
		}
		rules = append(rules, fmt.Sprintf("minitems=%d", f.Ref.MinItems))
	}
	if m := f.Ref.Min; m != nil {
		if f.Ref.Prim != "int" && f.Ref.Prim != "uint" {
			return "", fmt.Errorf("minimum on a member that is not an integer")
		}
		rules = append(rules, fmt.Sprintf("min=%d", int(*m)))
	}
	return strings.Join(rules, ","), nil
}

// descriptors declares every object's descriptor, fieldsT, read from its
// declaration (the members' json names and acp rules) at init.
func (e *emitter) descriptors(f *jen.File) {
	var defs []jen.Code
	for _, t := range e.m.Types {
		if t.Kind == TStruct && !t.IsUnknown {
			defs = append(defs, jen.Id("fields"+t.Name).Op("=").Add(jx("FieldsOf")).Call(jen.Parens(jen.Op("*").Id(t.Name)).Call(jen.Nil())))
		}
	}
	if len(defs) > 0 {
		f.Comment("The objects' descriptors: their members' names and rules, from their declarations.")
		f.Var().Defs(defs...)
		f.Line()
	}
}

// plainKey: the name renders as a JSON string without escapes, so every
// encoder writes it the same.
func plainKey(name string) bool {
	for _, r := range name {
		if r < 0x20 || r > 0x7e || strings.ContainsRune("\"\\<>&", r) {
			return false
		}
	}
	return true
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

// fieldDecode is a member's case in decodeAt: the jsonx helper for its Go
// type, and the member's schema default when the helper says it applies.
func (e *emitter) fieldDecode(f *Field) ([]jen.Code, error) {
	x := jen.Op("&").Id("x").Dot(f.Go)
	at := func() *jen.Statement { return jen.Id("d").Dot("At").Call(jen.Lit(f.Bit)) }
	var call *jen.Statement
	switch {
	case f.Ref.List:
		call = jx("List").Call(at(), x, e.decFunc(f.Ref.Elem))
	case f.Ref.Map:
		call = jx("Map").Call(at(), x, e.decFunc(f.Ref.Elem))
	case isStructRef(f.Ref) && f.Ptr:
		call = jx("StructPtr").Call(at(), x, jen.Parens(jen.Op("*").Id(f.Ref.Named.Name)).Dot("decodeAt"))
	case isStructRef(f.Ref):
		// Called directly: through a func value x would escape.
		if f.Nullable && f.Default == nil {
			return nil, fmt.Errorf("a nullable object member without a default must be a pointer")
		}
		// At first, on its own: Consumed reads the index it sets.
		call = jen.Id("d").Dot("Consumed").Call(jen.Id("x").Dot(f.Go).Dot("decodeAt").Call(jen.Id("d").Dot("Rest").Call(), jen.Nil()))
		if f.Nullable {
			call = jen.Id("d").Dot("Null").Call().Op("||").Op("!").Add(call)
		} else if f.OnError {
			call = jen.Op("!").Add(call)
		} else {
			return []jen.Code{at(), call}, nil
		}
		return []jen.Code{at(), jen.If(call).Block(setDefaultCall(f))}, nil
	case !f.Nullable && !f.OnNull && !f.OnError && !f.Ptr && f.MinLength == 0 && f.Ref.Min == nil && !f.Ref.List && !f.Ref.Map:
		// No rule to apply: a direct call (the common required member).
		if u := f.Ref.Named; u != nil && u.Kind == TUnion {
			return []jen.Code{jx("SetAt").Call(at(), x, jen.Id(unionDecoder(u)))}, nil
		}
		if isStringish(f.Ref) {
			// The common member: a call the compiler can make directly,
			// which a func value given to Set is not.
			dst := x
			if f.Ref.Named != nil {
				dst = jen.Parens(jen.Op("*").String()).Call(x)
			}
			return []jen.Code{at().Dot("SetString").Call(dst)}, nil
		}
		return []jen.Code{jx("Set").Call(at(), x, e.decFunc(f.Ref))}, nil
	case f.Ref.Named != nil && f.Ref.Named.Kind == TUnion:
		if f.Ptr {
			return nil, fmt.Errorf("a union member held by pointer")
		}
		call = jx("Union").Call(at(), x, jen.Id(unionDecoder(f.Ref.Named)))
	case f.MinLength > 0:
		if f.Ptr {
			return nil, fmt.Errorf("minLength on a member held by pointer")
		}
		call = jx("Text").Call(at(), x, e.decFunc(f.Ref))
	case f.Ref.Min != nil && f.Ptr:
		call = jx("IntMinPtr").Call(at(), x, e.decFunc(f.Ref))
	case f.Ref.Min != nil:
		call = jx("IntMin").Call(at(), x, e.decFunc(f.Ref))
	case f.Ptr:
		call = jx("Ptr").Call(at(), x, e.decFunc(f.Ref))
	default:
		call = jx("Value").Call(at(), x, e.decFunc(f.Ref))
	}
	if f.Default != nil && (f.Nullable || f.OnError) {
		// The helper leaves a null or malformed value's default to us.
		return []jen.Code{jen.If(jen.Op("!").Add(call)).Block(setDefaultCall(f))}, nil
	}
	return []jen.Code{call}, nil
}

// fieldCases are a member's cases in appendField's switch on i (and on
// whether the member is set): each returns ([]byte, error). Every encoder
// is called directly, so that x does not escape.
func (e *emitter) fieldCases(f *Field) []jen.Code {
	x := func() *jen.Statement { return jen.Id("x").Dot(f.Go) }
	at := jen.Id("i").Op("==").Lit(f.Bit)
	if omittable(f) {
		at = at.Op("&&").Add(x()).Op("!=").Nil()
	}
	keyed := jx("Keyed").Call(jen.Id("b"), keyLit(f.JSON))
	ret := func(s jen.Code) []jen.Code { return []jen.Code{jen.Case(at).Block(jen.Return(s))} }
	val := x()
	if f.Ptr && !isStructRef(f.Ref) {
		val = jen.Op("*").Add(x())
	}
	switch {
	case f.Ref.List:
		return ret(jx("EncList").Call(keyed, x(), e.encFunc(f.Ref.Elem)))
	case f.Ref.Map:
		return ret(jx("EncMap").Call(keyed, x(), e.encFunc(f.Ref.Elem)))
	case isStructRef(f.Ref):
		return ret(appendObject(f.Ref.Named, x(), keyed))
	case f.Ref.Named != nil && f.Ref.Named.Kind == TUnion:
		enc := ret(jen.Id("append"+f.Ref.Named.Name).Call(keyed, x()))
		if omittable(f) {
			return enc
		}
		// A required union must be set.
		return append([]jen.Code{jen.Case(jen.Id("i").Op("==").Lit(f.Bit).Op("&&").Add(x()).Op("==").Nil()).Block(
			jen.Return(jen.Id("b"), jx("NilUnion").Call()),
		)}, enc...)
	}
	if isStringRef(f.Ref) {
		return ret(jen.List(jx("KeyedString").Call(jen.Id("b"), keyLit(f.JSON), jen.String().Call(val)), jen.Nil()))
	}
	if s, ok := e.inlineEncodeAt(f.Ref, val, keyed); ok {
		return ret(jen.List(s, jen.Nil()))
	}
	return ret(e.encFunc(f.Ref).Call(keyed, val))
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

// inlineEncode is the allocation-free append for strings, booleans and
// integers, which cannot fail.
func (e *emitter) inlineEncode(ref *Ref, val *jen.Statement) (*jen.Statement, bool) {
	return e.inlineEncodeAt(ref, val, jen.Id("b"))
}

// inlineEncodeAt is inlineEncode appending to the buffer buf.
func (e *emitter) inlineEncodeAt(ref *Ref, val, buf *jen.Statement) (*jen.Statement, bool) {
	prim := ref
	conv := func(s *jen.Statement) *jen.Statement { return s }
	if t := ref.Named; t != nil {
		switch t.Kind {
		case TEnum:
			return jx("AppendString").Call(buf, jen.String().Call(val)), true
		case TIntEnum:
			return jx("AppendInt").Call(buf, jen.Int64().Call(val)), true
		case TScalar:
			prim = t.Scalar
			conv = func(s *jen.Statement) *jen.Statement { return s }
		default:
			return nil, false
		}
	}
	if prim.List || prim.Map {
		return nil, false
	}
	switch prim.Prim {
	case "string":
		return jx("AppendString").Call(buf, jen.String().Call(conv(val))), true
	case "bool":
		return jx("AppendBool").Call(buf, jen.Bool().Call(conv(val))), true
	case "int":
		return jx("AppendInt").Call(buf, jen.Int64().Call(conv(val))), true
	case "uint":
		return jx("AppendUint").Call(buf, jen.Uint64().Call(conv(val))), true
	}
	return nil, false
}

// variantJSON emits the JSON methods of a union variant: they speak the
// union's form, with the tag.
func (e *emitter) variantJSON(f *jen.File, t *Type) {
	v := t.VariantOf[0]
	u := v.Union
	if len(t.VariantOf) > 1 {
		panic("type " + t.Name + " is a variant of two unions")
	}
	marshal := []jen.Code{}
	if u.Union.Flattened && u.Schema == "" {
		// An inline flattened union has no whole-object form: the
		// variant's members alone.
		marshal = append(marshal,
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("append"+u.Name+"Members").Call(jen.Index().Byte().Values(jen.LitRune('{')), jen.Op("&").Id("x")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}')), jen.Nil()),
		)
	} else {
		marshal = append(marshal, jen.Return(jen.Id("append"+u.Name).Call(jen.Make(jen.Index().Byte(), jen.Lit(0), jen.Lit(256)), jen.Op("&").Id("x"))))
	}
	f.Comment(fmt.Sprintf("MarshalJSON encodes x as a %s value.", u.Name))
	f.Func().Params(jen.Id("x").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(marshal...)
	f.Line()
	unmarshal := "UnmarshalVariant"
	if u.Union.Flattened {
		unmarshal = "UnmarshalMembersVariant"
	}
	f.Comment(fmt.Sprintf("UnmarshalJSON decodes a %s value that must be this variant.", u.Name))
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.Return(jx(unmarshal).Call(jen.Id("data"), jen.Id("x"), jen.Id("decode"+u.Name), jen.Lit(t.Name))),
	)
	f.Line()
}

func (e *emitter) unknownCodec(f *jen.File, t *Type) {
	u := t.VariantOf[0].Union
	f.Comment(fmt.Sprintf("MarshalJSON emits Raw, verbatim, after checking it is a JSON object with the %q tag.", u.Union.Tag))
	f.Func().Params(jen.Id("x").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jx("EncUnknown").Call(jen.Nil(), jen.Id("x").Dot("Raw"), jen.Lit(u.Union.Tag), jen.False())),
	)
	f.Line()
	f.Comment(fmt.Sprintf("UnmarshalJSON keeps a copy of any JSON object (it does not check that the %s tag is unknown).", u.Name))
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.List(jen.Id("raw"), jen.Err()).Op(":=").Add(jx("Object")).Call(jen.Id("data")),
		jen.If(jen.Err().Op("==").Nil()).Block(jen.Err().Op("=").Add(jx("Validate")).Call(jen.Id("raw"))),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Id("x").Dot("Raw").Op("=").Id("raw"),
		jen.Return(jen.Nil()),
	)
	f.Line()
}

// appendObject appends recv, a value of the struct type t, to buf as a JSON
// object: ([]byte, error). Only an object kept verbatim has an appendJSON
// method; the others wrap their members in braces here.
func appendObject(t *Type, recv *jen.Statement, buf jen.Code) *jen.Statement {
	if keepsVerbatim(t) {
		return recv.Dot("appendJSON").Call(buf)
	}
	if t.Flat == nil {
		members, field, isDefault := memberArgs(t, func() *jen.Statement { return recv.Clone() })
		return jen.Id("fields"+t.Name).Dot("AppendObject").Call(buf, members, field, isDefault)
	}
	return jx("Braces").Call(appendMembersOf(t, func() *jen.Statement { return recv.Clone() }, jen.Append(buf, jen.LitRune('{')), jen.Lit("")))
}

// appendMembersOf appends the members of recv(), a value of the struct
// type t, after buf (tag first when not ""): ([]byte, error). Only an
// object sharing its members with a flattened union has an appendMembers
// method; the others are appended by their descriptor's Append.
func appendMembersOf(t *Type, recv func() *jen.Statement, buf, tag jen.Code) *jen.Statement {
	if t.Flat != nil {
		return recv().Dot("appendMembers").Call(buf, tag)
	}
	members, field, isDefault := memberArgs(t, recv)
	return jen.Id("fields"+t.Name).Dot("Append").Call(buf, tag, members, field, isDefault)
}

// memberArgs are the arguments of Fields.Append after the tag for recv(),
// a value of the struct type t: its kept members, appendField, isDefault.
func memberArgs(t *Type, recv func() *jen.Statement) (members, field, isDefault jen.Code) {
	members, field, isDefault = jen.Qual(jsonxPkg, "Members").Values(), jen.Nil(), jen.Nil()
	if !t.NoExtra {
		members = recv().Dot("Extra")
	}
	if len(t.Fields) > 0 {
		field = recv().Dot("appendField")
	}
	if hasIsDefault(t) {
		isDefault = recv().Dot("isDefault")
	}
	return members, field, isDefault
}

// hasIsDefault: the object records members that arrived absent and took
// their default, so it has an isDefault method.
func hasIsDefault(t *Type) bool {
	return !t.NoExtra && hasAbsentDefault(t)
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
func variantRecv(v *Variant, id string) *jen.Statement {
	if v.Type.Kind == TDefined {
		return jen.Parens(jen.Op("*").Id(v.Type.Base.Name)).Call(jen.Id(id))
	}
	return jen.Id(id)
}

func (e *emitter) unionCodec(f *jen.File, t *Type) error {
	u := t.Union
	if u.Tag != "" {
		e.taggedCodec(f, t)
	} else if err := e.shapeCodec(f, t); err != nil {
		return err
	}
	if u.Flattened && t.Schema != "" {
		// A def flattened into a variant that is also a member's type
		// elsewhere (v2 unstable's StateUpdate): its whole-object form.
		var verbatim []jen.Code
		for _, v := range u.Variants {
			if variantKeepsVerbatim(v) {
				verbatim = append(verbatim, jen.Case(jen.Op("*").Id(v.Type.Name)).Block(
					ifSet(appendVerbatim()),
				))
			}
		}
		body := []jen.Code{
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("append"+t.Name+"Members").Call(jen.Append(jen.Id("b"), jen.LitRune('{')), jen.Id("v")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err())),
			jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}')), jen.Nil()),
		}
		if len(verbatim) > 0 {
			body = append([]jen.Code{jen.Switch(jen.Id("v").Op(":=").Id("v").Assert(jen.Type())).Block(verbatim...)}, body...)
		}
		f.Comment(fmt.Sprintf("append%s appends v as a JSON object.", t.Name))
		f.Func().Id("append"+t.Name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(t.Name)).Params(jen.Index().Byte(), jen.Error()).Block(body...)
		f.Line()
		f.Comment(fmt.Sprintf("decode%sObjectAt decodes a whole %s object at the start of data", t.Name, t.Name))
		f.Comment("(no enclosing object's members to skip); it returns the value's length.")
		f.Func().Id("decode"+t.Name+"ObjectAt").Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Int(), jen.Error()).Block(
			jen.Return(jen.Id("decode"+t.Name+"At").Call(jen.Id("data"), jen.Nil())),
		)
		f.Line()
		f.Comment(fmt.Sprintf("Unmarshal%s decodes one %s value.", t.Name, t.Name))
		f.Func().Id("Unmarshal"+t.Name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error()).Block(
			jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("decode"+t.Name).Call(jx("TrimSpace").Call(jen.Id("data")), jen.Nil())),
		)
		f.Line()
	}
	e.variantCanonical(f, t)
	if !u.Flattened {
		f.Comment(fmt.Sprintf("Unmarshal%s decodes one %s value.", t.Name, t.Name))
		f.Func().Id("Unmarshal"+t.Name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error()).Block(
			jen.If(jen.Err().Op(":=").Add(jx("Own")).Call(jen.Op("&").Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("decode"+t.Name).Call(jx("TrimSpace").Call(jen.Id("data")))),
		)
		f.Line()
	}
	return nil
}

// ifSet returns enc, the encoding of v, a variant's pointer, unless v is
// nil (the union's encoder then fails).
func ifSet(enc jen.Code) *jen.Statement {
	return jen.If(jen.Id("v").Op("!=").Nil()).Block(jen.Return(enc))
}

// decodeVariant decodes a struct variant of the union u from data with
// skip list sk (and snapshots it when it keeps its input verbatim).
func decodeVariant(u *Type, v *Variant, sk jen.Code) []jen.Code {
	var whole jen.Code
	keep := false
	if w, ok := wholeObject(v.Union); ok && variantKeepsVerbatim(v) {
		whole, keep = w, true
	}
	if !keep {
		return []jen.Code{
			jen.Id("v").Op(":=").New(jen.Id(v.Type.Name)),
			jen.Return(jx("VariantAt").Index(jen.Id(u.Name)).Call(jen.Id("v"), variantRecv(v, "v").Dot("decodeAt"), jen.Id("data"), sk)),
		}
	}
	return []jen.Code{
		jen.Id("v").Op(":=").New(jen.Id(v.Type.Name)),
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(variantRecv(v, "v")).Dot("decodeAt").Call(jen.Id("data"), sk),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Lit(0), jen.Err()),
		),
		snapshotVariant(v, whole),
		jen.Return(jen.Id("v"), jen.Id("n"), jen.Nil()),
	}
}

func (e *emitter) taggedCodec(f *jen.File, t *Type) {
	u := t.Union
	params := []jen.Code{jen.Id("data").Index().Byte()}
	if u.Flattened {
		params = append(params, jen.Id("skip").Index().String())
	}
	tagVar := "tag" + t.Name
	f.Comment(fmt.Sprintf("%s lists the discriminator, which variants must not keep as unknown.", tagVar))
	f.Var().Id(tagVar).Op("=").Index().String().Values(jen.Lit(u.Tag))
	body := []jen.Code{
		jen.List(jen.Id("tag"), jen.Id("ok"), jen.Err()).Op(":=").Add(jx("Tag")).Call(jen.Id("data"), jen.Lit(u.Tag)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
		jen.Id("vskip").Op(":=").Id(tagVar),
	}
	if u.LenientTag {
		// A tag that is not a string (null, malformed) selects the untagged
		// branch, decoded keeping the member so it re-encodes verbatim.
		body[1] = jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.If(jen.Op("!").Qual("errors", "Is").Call(jen.Err(), jx("ErrType"))).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
			jen.Block(decodeVariant(t, u.Fallback, jen.Id("skip"))...),
		)
	}
	if u.Flattened {
		body = append(body, jen.If(jen.Len(jen.Id("skip")).Op(">").Lit(0)).Block(
			jen.Id("vskip").Op("=").Add(jx("Extend")).Call(jen.Id("skip"), jen.Lit(u.Tag)),
		))
	}
	if u.Fallback != nil {
		body = append(body, jen.If(jen.Op("!").Id("ok")).Block(decodeVariant(t, u.Fallback, jen.Id("vskip"))...))
	} else {
		body = append(body, jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Lit(0), jx("Missing").Call(jen.Lit(u.Tag)))))
	}
	var cases []jen.Code
	for _, v := range u.Variants {
		if v.Tag == "" {
			continue
		}
		cases = append(cases, jen.Case(jen.Lit(v.Tag)).Block(decodeVariant(t, v, jen.Id("vskip"))...))
	}
	if u.Fallback != nil {
		// The untagged branch named by its title: decoded without
		// skipping the tag, which it keeps as a member of its own, so the
		// object re-encodes byte for byte.
		sk := jen.Nil()
		if u.Flattened {
			sk = jen.Id("skip")
		}
		cases = append(cases, jen.Case(jen.Lit(u.FallbackTag)).Block(decodeVariant(t, u.Fallback, sk)...))
	}
	body = append(body, jen.Switch(jen.String().Call(jen.Id("tag"))).Block(cases...))
	body = append(body,
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(jx("Skip")).Call(jen.Id("data")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
	)
	if u.Flattened {
		body = append(body,
			jen.Comment("An unknown tag: keep the members that are not the owner's."),
			jen.List(jen.Id("raw"), jen.Err()).Op(":=").Add(jx("ObjectWithout")).Call(jen.Id("data").Index(jen.Empty(), jen.Id("n")), jen.Id("skip")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
			jen.Return(jen.Op("&").Id(u.Unknown.Name).Values(jen.Dict{jen.Id("Raw"): jen.Id("raw")}), jen.Id("n"), jen.Nil()),
		)
	} else {
		body = append(body,
			jen.Comment("An unknown tag: keep the whole object verbatim."),
			jen.Return(jen.Op("&").Id(u.Unknown.Name).Values(jen.Dict{jen.Id("Raw"): jx("Raw").Call(jen.Id("data").Index(jen.Empty(), jen.Id("n")))}), jen.Id("n"), jen.Nil()),
		)
	}
	f.Comment(fmt.Sprintf("decode%sAt reads the %q tag with one scan, then decodes only that", t.Name, u.Tag))
	f.Comment("variant, from the start of data; it returns the value's length.")
	f.Func().Id("decode"+t.Name+"At").Params(params...).Params(jen.Id(t.Name), jen.Int(), jen.Error()).Block(body...)
	f.Line()
	e.unionWrapper(f, t)

	// Encoding.
	members := u.Flattened
	var ecases []jen.Code
	for _, v := range u.Variants {
		prefix := tagMember(v)
		recv := func() *jen.Statement { return variantRecv(v, "v") }
		enc := appendMembersOf(structOf(v.Type), recv, jen.Id("b"), jen.Lit(prefix))
		switch {
		case members:
		case variantKeepsVerbatim(v):
			enc = appendVerbatim()
		default:
			enc = jx("Braces").Call(appendMembersOf(structOf(v.Type), recv, jen.Append(jen.Id("b"), jen.LitRune('{')), jen.Lit(prefix)))
		}
		ecases = append(ecases, jen.Case(jen.Op("*").Id(v.Type.Name)).Block(ifSet(enc)))
	}
	ecases = append(ecases, jen.Case(jen.Op("*").Id(u.Unknown.Name)).Block(
		ifSet(jx("EncUnknown").Call(jen.Id("b"), jen.Id("v").Dot("Raw"), jen.Lit(u.Tag), jen.Lit(members))),
	))
	name := "append" + t.Name
	what := "appends v as a JSON object, tag first"
	if members {
		name += "Members"
		what = "appends v's members (tag first) to an object being encoded"
	}
	f.Comment(fmt.Sprintf("%s %s.", name, what))
	f.Func().Id(name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(t.Name)).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Switch(jen.Id("v").Op(":=").Id("v").Assert(jen.Type())).Block(ecases...),
		jen.Return(jen.Id("b"), jx("EncodeError").Call(jen.Lit(""), jen.Lit("nil "+t.Name))),
	)
	f.Line()
}

// unionWrapper emits decodeU, the exact-span form of decodeUAt.
func (e *emitter) unionWrapper(f *jen.File, t *Type) {
	params := []jen.Code{jen.Id("data").Index().Byte()}
	args := []jen.Code{jen.Id("data")}
	if t.Union.Flattened {
		params = append(params, jen.Id("skip").Index().String())
		args = append(args, jen.Id("skip"))
	}
	f.Comment(fmt.Sprintf("decode%s decodes data, exactly one %s value.", t.Name, t.Name))
	f.Func().Id("decode"+t.Name).Params(params...).Params(jen.Id(t.Name), jen.Error()).Block(
		jen.List(jen.Id("v"), jen.Id("_"), jen.Err()).Op(":=").Id("decode"+t.Name+"At").Call(args...),
		jen.Return(jen.Id("v"), jen.Err()),
	)
	f.Line()
}

func (e *emitter) shapeCodec(f *jen.File, t *Type) error {
	u := t.Union
	params := []jen.Code{jen.Id("data").Index().Byte()}
	if u.Flattened {
		params = append(params, jen.Id("skip").Index().String())
	}
	sk := jen.Nil()
	if u.Flattened {
		sk = jen.Id("skip")
	}
	byKind := map[string][]*Variant{}
	var kinds []string
	for _, v := range u.Variants {
		if len(byKind[v.JSONKind]) == 0 {
			kinds = append(kinds, v.JSONKind)
		}
		byKind[v.JSONKind] = append(byKind[v.JSONKind], v)
	}
	scalar := func(v *Variant, dec *jen.Statement) []jen.Code {
		check := jen.Null()
		if v.Type.Scalar.MinItems > 0 {
			check = minItemsCheck("s", v.Type.Scalar.MinItems)
		}
		return []jen.Code{
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(dec),
			check,
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
			jen.Return(jen.Id(v.Type.Name).Call(jen.Id("s")), jen.Id("n"), jen.Nil()),
		}
	}
	var cases []jen.Code
	var want []string
	handledNumber := false
	for _, kind := range kinds {
		vs := byKind[kind]
		switch kind {
		case "null":
			want = append(want, "null")
			cases = append(cases, jen.Case(jx("KindNull")).Block(jen.Return(jen.Id(vs[0].Type.Name).Values(), jen.Id("n"), jen.Nil())))
		case "string":
			want = append(want, "string")
			cases = append(cases, jen.Case(jx("KindString")).Block(scalar(vs[0], e.decodeCall(vs[0].Type.Scalar, false, jen.Id("data")))...))
		case "boolean":
			want = append(want, "boolean")
			cases = append(cases, jen.Case(jx("KindBool")).Block(scalar(vs[0], e.decodeCall(vs[0].Type.Scalar, false, jen.Id("data")))...))
		case "integer", "number":
			if handledNumber {
				continue
			}
			handledNumber = true
			want = append(want, "number")
			iv, nv := byKind["integer"], byKind["number"]
			var body []jen.Code
			switch {
			case len(iv) > 0 && len(nv) > 0:
				// An integer that fits is the integer variant; any other
				// number the number variant.
				body = append(body,
					jen.If(jx("IsInteger").Call(jen.Id("data"))).Block(
						jen.If(jen.List(jen.Id("i"), jen.Err()).Op(":=").Add(e.decodeCall(iv[0].Type.Scalar, false, jen.Id("data"))), jen.Err().Op("==").Nil()).Block(
							jen.Return(jen.Id(iv[0].Type.Name).Call(jen.Id("i")), jen.Id("n"), jen.Nil()),
						),
					),
				)
				body = append(body, scalar(nv[0], e.decodeCall(nv[0].Type.Scalar, false, jen.Id("data")))...)
			case len(iv) > 0:
				body = scalar(iv[0], e.decodeCall(iv[0].Type.Scalar, false, jen.Id("data")))
			default:
				body = scalar(nv[0], e.decodeCall(nv[0].Type.Scalar, false, jen.Id("data")))
			}
			cases = append(cases, jen.Case(jx("KindNumber")).Block(body...))
		case "array":
			want = append(want, "array")
			var body []jen.Code
			if len(vs) > 1 {
				body = append(body, jen.List(jen.Id("first"), jen.Id("_")).Op(":=").Add(jx("FirstItem")).Call(jen.Id("data")))
				for _, v := range vs {
					body = append(body, jen.If(hasAnyKey("first", v.Keys)).Block(scalar(v, e.decodeCall(v.Type.Scalar, false, jen.Id("data")))...))
				}
			}
			body = append(body, scalar(vs[0], e.decodeCall(vs[0].Type.Scalar, false, jen.Id("data")))...)
			cases = append(cases, jen.Case(jx("KindArray")).Block(body...))
		case "object":
			want = append(want, "object")
			var body []jen.Code
			if len(vs) == 1 {
				body = decodeVariant(t, vs[0], sk)
			} else {
				var all []string
				for _, v := range vs {
					body = append(body, jen.If(hasAnyKey("data", v.Keys)).Block(decodeVariant(t, v, sk)...))
					all = append(all, quoteAll(v.Keys)...)
				}
				body = append(body, jen.Return(jen.Nil(), jen.Lit(0), jx("NoneOf").Call(jen.Lit(strings.Join(all, ", ")))))
			}
			cases = append(cases, jen.Case(jx("KindObject")).Block(body...))
		default:
			return fmt.Errorf("%s: shape %s not supported", t.Name, kind)
		}
	}
	f.Comment(fmt.Sprintf("decode%sAt picks the variant from the JSON shape of the value at the", t.Name))
	f.Comment("start of data; it returns the value's length.")
	f.Func().Id("decode"+t.Name+"At").Params(params...).Params(jen.Id(t.Name), jen.Int(), jen.Error()).Block(
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(jx("Skip")).Call(jen.Id("data")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Lit(0), jen.Err())),
		jen.Id("data").Op("=").Id("data").Index(jen.Empty(), jen.Id("n")),
		jen.Switch(jx("KindOf").Call(jen.Id("data"))).Block(cases...),
		jen.Return(jen.Nil(), jen.Lit(0), jx("TypeError").Call(jen.Lit(strings.Join(want, " or ")), jen.Id("data"))),
	)
	f.Line()
	e.unionWrapper(f, t)

	members := u.Flattened
	var ecases []jen.Code
	for _, v := range u.Variants {
		var stmts []jen.Code
		switch v.JSONKind {
		case "null":
			stmts = append(stmts, jen.Return(jen.Append(jen.Id("b"), jen.Lit("null").Op("...")), jen.Nil()))
			ecases = append(ecases, jen.Case(jen.Id(v.Type.Name)).Block(stmts...))
			continue
		case "object":
			switch {
			case members:
				stmts = append(stmts, ifSet(appendMembersOf(structOf(v.Type), func() *jen.Statement { return variantRecv(v, "v") }, jen.Id("b"), jen.Lit(""))))
			case variantKeepsVerbatim(v):
				stmts = append(stmts, ifSet(appendVerbatim()))
			default:
				stmts = append(stmts, ifSet(appendObject(structOf(v.Type), variantRecv(v, "v"), jen.Id("b"))))
			}
			ecases = append(ecases, jen.Case(jen.Op("*").Id(v.Type.Name)).Block(stmts...))
			continue
		}
		conv := goType(v.Type.Scalar).Call(jen.Id("v"))
		if v.JSONKind == "number" && len(byKind["integer"]) > 0 {
			// Keep a number a number: 1.0 must not come back as the integer variant.
			stmts = append(stmts, jen.Return(jx("EncFloatNotInt").Call(jen.Id("b"), conv)))
		} else if s, ok := e.inlineEncode(v.Type.Scalar, jen.Id("v")); ok {
			stmts = append(stmts, jen.Return(s, jen.Nil()))
		} else {
			stmts = append(stmts, jen.Return(e.encodeCall(v.Type.Scalar, conv)))
		}
		ecases = append(ecases, jen.Case(jen.Id(v.Type.Name)).Block(stmts...))
	}
	name := "append" + t.Name
	if members {
		name += "Members"
	}
	for _, v := range u.Variants {
		if v.Type.Kind != TScalar {
			continue
		}
		f.Comment(fmt.Sprintf("MarshalJSON encodes x as a %s value.", t.Name))
		f.Func().Params(jen.Id("x").Id(v.Type.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jen.Id(name).Call(jen.Nil(), jen.Id("x"))),
		)
		f.Line()
	}
	f.Comment(fmt.Sprintf("%s appends v in its variant's JSON form.", name))
	f.Func().Id(name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(t.Name)).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Switch(jen.Id("v").Op(":=").Id("v").Assert(jen.Type())).Block(ecases...),
		jen.Return(jen.Id("b"), jx("EncodeError").Call(jen.Lit(""), jen.Lit("nil "+t.Name))),
	)
	f.Line()
	return nil
}

func hasAnyKey(v string, keys []string) *jen.Statement {
	var s *jen.Statement
	for _, k := range keys {
		c := jx("HasKey").Call(jen.Id(v), jen.Lit(k))
		if s == nil {
			s = c
		} else {
			s = s.Op("||").Add(c)
		}
	}
	return s
}

// helpers emits the decodeT/appendT functions the codecs referenced.
func (e *emitter) helpers(f *jen.File) {
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
			t := e.need[k]
			if strings.HasPrefix(k, "dec:") {
				e.decHelper(f, t)
			} else {
				e.encHelper(f, t)
			}
			f.Line()
		}
	}
}

func (e *emitter) decHelper(f *jen.File, t *Type) {
	sig := f.Func().Id("decode"+t.Name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error())
	switch t.Kind {
	case TStruct:
		sig.Block(
			jen.Var().Id("x").Id(t.Name),
			jen.Err().Op(":=").Add(jx("Length")).Call(jen.Id("x").Dot("decodeAt").Call(jen.Id("data"), jen.Nil())),
			jen.Return(jen.Id("x"), jen.Err()),
		)
	case TEnum:
		if t.Open {
			sig.Block(
				jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jx("String")).Call(jen.Id("data")),
				jen.Return(jen.Id(t.Name).Call(jen.Id("s")), jen.Err()),
			)
			break
		}
		vals := []jen.Code{jen.Id("data"), jen.Lit(t.Name)}
		for _, v := range t.Values {
			vals = append(vals, jen.Id(v.Go))
		}
		sig.Block(jen.Return(jx("Enum").Call(vals...)))
	case TIntEnum:
		sig.Block(
			jen.List(jen.Id("i"), jen.Err()).Op(":=").Add(jx("Int32")).Call(jen.Id("data")),
			jen.Return(jen.Id(t.Name).Call(jen.Id("i")), jen.Err()),
		)
	case TScalar:
		sig.Block(
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(e.decodeCall(t.Scalar, false, jen.Id("data"))),
			jen.Return(jen.Id(t.Name).Call(jen.Id("s")), jen.Err()),
		)
	case TRaw:
		sig.Block(jen.Return(jen.Id(t.Name).Call(jx("Raw").Call(jen.Id("data"))), jen.Nil()))
	default:
		panic("decHelper: " + t.Name)
	}
}

func (e *emitter) encHelper(f *jen.File, t *Type) {
	sig := f.Func().Id("append"+t.Name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(t.Name)).Params(jen.Index().Byte(), jen.Error())
	switch t.Kind {
	case TStruct:
		sig.Block(jen.Return(appendObject(t, jen.Id("v"), jen.Id("b"))))
	case TEnum, TIntEnum, TScalar:
		if s, ok := e.inlineEncode(&Ref{Named: t}, jen.Id("v")); ok {
			sig.Block(jen.Return(s, jen.Nil()))
		} else {
			sig.Block(jen.Return(e.encodeCall(t.Scalar, goType(t.Scalar).Call(jen.Id("v")))))
		}
	case TRaw:
		sig.Block(jen.Return(jx("EncRaw").Call(jen.Id("b"), jen.Qual(segJSON, "RawMessage").Call(jen.Id("v")))))
	default:
		panic("encHelper: " + t.Name)
	}
}
