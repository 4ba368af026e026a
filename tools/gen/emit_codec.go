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
// shorter than the schema's minItems.
func minItemsCheck(v string, n int) *jen.Statement {
	return jen.If(jen.Err().Op("==").Nil().Op("&&").Len(jen.Id(v)).Op("<").Lit(n)).Block(
		jen.Err().Op("=").Add(jx("Errorf")).Call(jx("ErrInvalidValue"), jen.Lit(fmt.Sprintf("fewer than %d items", n))),
	)
}

// keyLit is the `"key":` prefix of a member, as a Go string literal.
func keyLit(key string) *jen.Statement {
	k, _ := json.Marshal(key)
	return jen.Lit(string(k) + ":")
}

// returnErrAt returns err with the member key prefixed to its path.
func returnErrAt(key string) *jen.Statement {
	return jen.Return(jen.Id("b"), jx("AtField").Call(jen.Err(), jen.Lit(key)))
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
		return jx("List").Call(v, jen.Lit(skipInvalid), e.decFunc(ref.Elem))
	case ref.Map:
		return jx("Map").Call(v, e.decFunc(ref.Elem))
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
			return jen.Parens(val).Dot("appendJSON").Call(jen.Id("b"))
		case TUnion:
			return jen.Id("append"+t.Name).Call(jen.Id("b"), val)
		}
	}
	return e.encFunc(ref).Call(jen.Id("b"), val)
}

// keepsVerbatim: an object whose members a flattened union shares, encoded
// on its own (not as another union's variant), keeps non-canonical input
// verbatim; no layout spans its members and its variant's.
func keepsVerbatim(t *Type) bool {
	return t.Kind == TStruct && t.Flat != nil && len(t.VariantOf) == 0
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
			jen.Id("_").Op("=").Add(x.Clone()).Dot("decode").Call(jen.Index().Byte().Call(jen.Lit(lit)), jen.Nil()),
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
	for _, t := range e.m.Types {
		switch t.Kind {
		case TStruct:
			if t.IsUnknown {
				e.unknownCodec(f, t)
				continue
			}
			e.structCodec(f, t)
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
					jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
					jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("decode"+t.Name).Call(jen.Id("data")),
					jen.If(jen.Err().Op("==").Nil()).Block(jen.Op("*").Id("x").Op("=").Id("v")),
					jen.Return(jen.Err()),
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

// structCodec emits decode, appendMembers, appendJSON and the JSON methods
// of an object.
func (e *emitter) structCodec(f *jen.File, t *Type) {
	x := jen.Id("x")
	// decode
	needSeen := false
	for _, fd := range t.Fields {
		if fd.Required || fd.Default != nil {
			needSeen = true
		}
	}
	ordered := !t.NoExtra // objects with Extra remember a non-canonical member order
	var cases []jen.Code
	for _, fd := range t.Fields {
		var pre []jen.Code
		if ordered {
			pre = append(pre, jen.Id("ord").Dot("Known").Call(jen.Lit(fd.Bit)))
		}
		cases = append(cases, jen.Case(jen.Lit(fd.JSON)).Block(append(pre, e.fieldDecode(fd, needSeen, ordered)...)...))
	}
	if !t.NoExtra {
		cases = append(cases, jen.Default().Block(
			jen.If(jx("Skipped").Call(jen.Id("it").Dot("Key").Call(), jen.Id("skip"))).Block(
				jen.Id("ord").Dot("Skipped").Call(jen.Id("skip")),
				jen.Continue(),
			),
			jen.Id("ord").Dot("Unknown").Call(),
			jx("AddMember").Call(jen.Op("&").Id("x").Dot("Extra"), jen.Id("it").Dot("Member").Call()),
		))
	}
	body := []jen.Code{}
	hasNulls := false
	for _, fd := range t.Fields {
		if fd.Nullable && fd.Default == nil && !fd.OnNull {
			hasNulls = true
		}
	}
	if ordered {
		body = append(body, jen.Var().Id("ord").Qual(jsonxPkg, "Order"))
		if hasNulls {
			body = append(body, jen.Var().Id("nulls").Uint64())
		}
	}
	if needSeen {
		body = append(body, jen.Var().Id("seen").Uint64())
	}
	loop := []jen.Code{}
	if len(cases) > 0 {
		loop = append(loop, jen.Switch(jen.String().Call(jen.Id("it").Dot("Key").Call())).Block(cases...))
	}
	body = append(body,
		jen.For(jen.Id("it").Dot("Next").Call()).Block(loop...),
		jen.If(jen.Err().Op(":=").Id("it").Dot("Err").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Comment("From here on, data is exactly this object."),
		jen.Id("data").Op("=").Id("data").Index(jen.Empty(), jen.Id("it").Dot("End").Call()),
	)
	for _, fd := range t.Fields {
		bit := jen.Id("seen").Op("&").Parens(jen.Lit(1).Op("<<").Lit(fd.Bit)).Op("==").Lit(0)
		if fd.Required {
			body = append(body, jen.If(bit).Block(jen.Return(jx("Missing").Call(jen.Lit(fd.JSON)))))
		} else if fd.Default != nil {
			stmts := e.defaultStmts(fd)
			if ordered {
				stmts = append(stmts, jen.Id("ord").Dot("Absent").Call())
			}
			body = append(body, jen.If(bit).Block(stmts...))
		}
	}
	if ordered {
		// The members the encoder will write: always-written ones, plus
		// optional ones that decoded to something.
		// Members that were absent and took a default stay absent.
		var always uint64
		var opt []jen.Code
		hasDefault := false
		for _, fd := range t.Fields {
			bit := jen.Lit(1).Op("<<").Lit(fd.Bit)
			switch {
			case omittable(fd):
				opt = append(opt, jen.If(jen.Id("x").Dot(fd.Go).Op("!=").Nil()).Block(
					jen.Id("present").Op("|=").Add(bit),
				))
			case fd.Default != nil:
				hasDefault = true
				opt = append(opt, jen.If(jen.Id("seen").Op("&").Parens(bit.Clone()).Op("!=").Lit(0)).Block(
					jen.Id("present").Op("|=").Add(bit.Clone()),
				).Else().Block(
					jen.Id("absent").Op("|=").Add(bit.Clone()),
				))
			default:
				always |= 1 << fd.Bit
			}
		}
		blk := []jen.Code{jen.Id("present").Op(":=").Uint64().Call(jen.Lit(int(always)))}
		nulls := jen.Lit(0)
		if hasNulls {
			nulls = jen.Id("nulls")
		}
		absent := jen.Lit(0)
		if hasDefault {
			blk = append(blk, jen.Var().Id("absent").Uint64())
			absent = jen.Id("absent")
		}
		blk = append(blk, opt...)
		blk = append(blk, jx("SetLayout").Call(jen.Op("&").Id("x").Dot("Extra"), jx("NormalizeLayout").Call(
			jx("BuildLayout").Call(jen.Id("data"), jen.Id("skip"), jen.Id("memberIndex"+t.Name)),
			jen.Id("present"), absent, nulls, jen.Lit(len(t.Fields)),
		)))
		body = append(body, jen.If(jen.Id("ord").Dot("Disordered").Call()).Block(blk...))
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
			jen.List(jen.Id("u"), jen.Err()).Op(":=").Id("decode"+u.Name).Call(jen.Id("data"), jen.Id("uskip")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Id("x").Dot(t.Flat.Go).Op("=").Id("u"),
		)
		if keepsVerbatim(t) {
			body = append(body,
				jen.Id("x").Dot("verbatim").Op("=").Qual(jsonxPkg, "Verbatim").Values(),
				jen.Id("x").Dot("verbatim").Op("=").Add(jx("Snapshot")).Call(jen.Id("data"), jen.Id("x").Dot("appendCanonical")),
			)
		}
	}
	body = append(body, jen.Return(jen.Nil()))
	f.Comment("decode reads the JSON object data into x; members named in skip belong")
	f.Comment("to an enclosing object or union.")
	f.Func().Params(x.Clone().Op("*").Id(t.Name)).Id("decode").Params(jen.Id("data").Index().Byte(), jen.Id("skip").Index().String()).Error().Block(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("x").Dot("decodeAt").Call(jen.Id("data"), jen.Id("skip")),
		jen.Return(jen.Err()),
	)
	f.Line()
	f.Comment("decodeAt decodes the JSON object at the start of data (which may go on")
	f.Comment("after it) and returns its length.")
	f.Func().Params(x.Clone().Op("*").Id(t.Name)).Id("decodeAt").Params(jen.Id("data").Index().Byte(), jen.Id("skip").Index().String()).Params(jen.Int(), jen.Error()).Block(
		jen.Var().Id("it").Qual(jsonxPkg, "ObjectIter"),
		jen.If(jen.Err().Op(":=").Id("it").Dot("ResetPrefix").Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())),
		jen.If(jen.Err().Op(":=").Id("x").Dot("decodeMembers").Call(jen.Op("&").Id("it"), jen.Id("data"), jen.Id("skip")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Err())),
		jen.Return(jen.Id("it").Dot("End").Call(), jen.Nil()),
	)
	f.Line()
	f.Comment("decodeMembers reads the members it iterates into x.")
	f.Func().Params(x.Clone().Op("*").Id(t.Name)).Id("decodeMembers").Params(jen.Id("it").Op("*").Qual(jsonxPkg, "ObjectIter"), jen.Id("data").Index().Byte(), jen.Id("skip").Index().String()).Error().Block(body...)
	f.Line()

	// appendMembers
	tagB := jen.Id("tag").Op("!=").Lit("")
	var enc []jen.Code
	if ordered {
		enc = append(enc, jen.If(jx("HasLayout").Call(jen.Id("x").Dot("Extra"))).Block(
			jen.Return(jen.Id("x").Dot("appendOrdered").Call(jen.Id("b"), jen.Id("tag"))),
		))
	}
	enc = append(enc, jen.If(tagB).Block(
		jen.Id("b").Op("=").Add(jx("Sep")).Call(jen.Id("b")),
		jen.Id("b").Op("=").Append(jen.Id("b"), jen.Id("tag").Op("...")),
	))
	var fieldCases []jen.Code
	fieldUsesErr := false
	for _, fd := range t.Fields {
		stmts, errUsed := e.fieldEncode(fd)
		fieldUsesErr = fieldUsesErr || errUsed
		fieldCases = append(fieldCases, jen.Case(jen.Lit(fd.Bit)).Block(stmts...))
	}
	usesErr := len(t.Fields) > 0
	if len(t.Fields) > 0 {
		enc = append(enc, jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Lit(len(t.Fields)), jen.Id("i").Op("++")).Block(
			jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Id("x").Dot("appendField").Call(jen.Id("b"), jen.Id("i")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Id("b"), jen.Err()),
			),
		))
		fbody := []jen.Code{}
		if fieldUsesErr {
			fbody = append(fbody, jen.Var().Err().Error())
		}
		fbody = append(fbody, jen.Switch(jen.Id("i")).Block(fieldCases...), jen.Return(jen.Id("b"), jen.Nil()))
		f.Comment("appendField appends the member with index i (schema order), if it is set.")
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendField").Params(jen.Id("b").Index().Byte(), jen.Id("i").Int()).Params(jen.Index().Byte(), jen.Error()).Block(fbody...)
		f.Line()
	}
	if ordered {
		var idx []jen.Code
		for _, fd := range t.Fields {
			idx = append(idx, jen.Case(jen.Lit(fd.JSON)).Block(jen.Return(jen.Lit(fd.Bit))))
		}
		body := []jen.Code{jen.Return(jen.Lit(-1))}
		if len(idx) > 0 {
			body = append([]jen.Code{jen.Switch(jen.String().Call(jen.Id("key"))).Block(idx...)}, body...)
		}
		var keys []jen.Code
		for _, fd := range t.Fields {
			keys = append(keys, keyLit(fd.JSON))
		}
		f.Comment(fmt.Sprintf("keys%s are the `\"name\":` prefixes of %s's members, by index.", t.Name, t.Name))
		f.Var().Id("keys" + t.Name).Op("=").Index().String().Values(keys...)
		f.Comment(fmt.Sprintf("memberIndex%s maps a member name to its index in %s, or -1.", t.Name, t.Name))
		f.Func().Id("memberIndex" + t.Name).Params(jen.Id("key").Index().Byte()).Int().Block(body...)
		f.Line()
		field := jen.Id("x").Dot("appendField")
		if len(t.Fields) == 0 {
			field = jen.Nil()
		}
		isDefault := jen.Nil()
		var defCases []jen.Code
		for _, fd := range t.Fields {
			if fd.Default == nil || fd.Required {
				continue
			}
			// The same default statements, applied to a scratch value d.
			stmts := e.defaultStmts(fd)
			defCases = append(defCases, jen.Case(jen.Lit(fd.Bit)).Block(
				append([]jen.Code{jen.Id("x").Op(":=").Op("&").Id("d")}, stmts...)...,
			))
		}
		if len(defCases) > 0 {
			isDefault = jen.Id("x").Dot("isDefault")
			f.Comment("isDefault reports whether member i still encodes as its schema default")
			f.Comment("(only asked for members that were absent on arrival).")
			f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("isDefault").Params(jen.Id("i").Int()).Bool().Block(
				jen.Var().Id("d").Id(t.Name),
				jen.Switch(jen.Id("i")).Block(defCases...),
				jen.List(jen.Id("have"), jen.Id("err1")).Op(":=").Id("x").Dot("appendField").Call(jen.Nil(), jen.Id("i")),
				jen.List(jen.Id("want"), jen.Id("err2")).Op(":=").Id("d").Dot("appendField").Call(jen.Nil(), jen.Id("i")),
				jen.Return(jen.Id("err1").Op("==").Nil().Op("&&").Id("err2").Op("==").Nil().Op("&&").Qual("bytes", "Equal").Call(jen.Id("have"), jen.Id("want"))),
			)
			f.Line()
		}
		f.Comment("appendOrdered appends x's members in the order they arrived (Extra's")
		f.Comment("layout), then any member set since, in schema order.")
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendOrdered").Params(jen.Id("b").Index().Byte(), jen.Id("tag").String()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jx("AppendOrdered").Call(jen.Id("b"), jen.Id("x").Dot("Extra"), jen.Id("tag"), jen.Id("keys"+t.Name), field, isDefault)),
		)
		f.Line()
	}
	if t.Flat != nil {
		u := t.Flat.Ref.Named
		usesErr = true
		enc = append(enc,
			jen.If(jen.Id("x").Dot(t.Flat.Go).Op("==").Nil()).Block(
				jen.Return(jen.Id("b"), jx("EncodeError").Call(jen.Lit(""), jen.Lit(t.Name+"."+t.Flat.Go+" is nil"))),
			),
			jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Id("append"+u.Name+"Members").Call(jen.Id("b"), jen.Id("x").Dot(t.Flat.Go)), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Id("b"), jen.Err()),
			),
		)
	}
	if !t.NoExtra {
		enc = append(enc, jen.Id("b").Op("=").Add(jx("AppendMembers")).Call(jen.Id("b"), jen.Id("x").Dot("Extra")))
	}
	if usesErr {
		enc = append([]jen.Code{jen.Var().Err().Error()}, enc...)
	}
	enc = append(enc, jen.Return(jen.Id("b"), jen.Nil()))
	f.Comment("appendMembers appends x's members, each preceded by a separator as needed;")
	f.Comment("tag, when not empty, is the union discriminator member to put first.")
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendMembers").Params(jen.Id("b").Index().Byte(), jen.Id("tag").String()).Params(jen.Index().Byte(), jen.Error()).Block(enc...)
	f.Line()
	appendObj := "appendJSON"
	if keepsVerbatim(t) {
		appendObj = "appendCanonical"
		f.Comment("appendJSON appends x as a JSON object: as it arrived while it is unchanged.")
		f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("appendJSON").Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.Return(jen.Id("x").Dot("verbatim").Dot("Append").Call(jen.Id("b"), jen.Id("x").Dot("appendCanonical"))),
		)
		f.Line()
		f.Comment("appendCanonical appends x as a JSON object, from its fields.")
	} else {
		f.Comment("appendJSON appends x as a JSON object.")
	}
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id(appendObj).Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('{')),
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("x").Dot("appendMembers").Call(jen.Id("b"), jen.Lit("")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err())),
		jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}')), jen.Nil()),
	)
	f.Line()
	if len(t.VariantOf) > 0 {
		e.variantJSON(f, t)
		return
	}
	f.Comment("MarshalJSON encodes x: known members in schema order, then Extra.")
	f.Func().Params(jen.Id("x").Id(t.Name)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jen.Id("x").Dot("appendJSON").Call(jen.Make(jen.Index().Byte(), jen.Lit(0), jen.Lit(256)))),
	)
	f.Line()
	f.Comment("UnmarshalJSON checks that data is valid JSON, then decodes it into x,")
	f.Comment("replacing its contents.")
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Op("*").Id("x").Op("=").Id(t.Name).Values(),
		jen.Return(jen.Id("x").Dot("decode").Call(jen.Id("data"), jen.Nil())),
	)
	f.Line()
}

// fieldDecode is the body of one member's case in decode.
func (e *emitter) fieldDecode(f *Field, needSeen, ordered bool) []jen.Code {
	var out []jen.Code
	if needSeen && (f.Required || f.Default != nil) {
		out = append(out, jen.Id("seen").Op("|=").Lit(1).Op("<<").Lit(f.Bit))
	}
	x := jen.Id("x").Dot(f.Go)
	isNull := jen.Id("it").Dot("IsNull").Call()
	val := jen.Id("it").Dot("Value").Call()
	switch {
	case f.OnNull:
		out = append(out, jen.If(isNull).Block(x.Clone().Op("=").Add(goType(f.Ref)).Values(), jen.Continue()))
	case f.Nullable:
		var set []jen.Code
		if f.Default != nil {
			set = e.defaultStmts(f)
		} else {
			set = []jen.Code{zeroStmt(f)}
			if ordered {
				// Remember the null so that it is written back.
				set = append(set,
					jen.Id("nulls").Op("|=").Lit(1).Op("<<").Lit(f.Bit),
					jen.Id("ord").Dot("Null").Call(),
				)
			}
		}
		out = append(out, jen.If(isNull).Block(append(set, jen.Continue())...))
	}
	onErr := func() []jen.Code {
		if f.OnError {
			return append(e.defaultStmts(f), jen.Continue())
		}
		return []jen.Code{jen.Return(jx("AtField").Call(jen.Err(), jen.Lit(f.JSON)))}
	}
	// Objects and unions decode straight from the input and report how much
	// they consumed, so the value is not scanned once to skip it and again
	// to decode it.
	consume := jen.Id("it").Dot("Consume").Call(jen.Id("n"))
	if isStructRef(f.Ref) && !f.Ptr {
		out = append(out,
			jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(x.Clone()).Dot("decodeAt").Call(jen.Id("it").Dot("Rest").Call(), jen.Nil()),
			jen.If(jen.Err().Op("!=").Nil()).Block(onErr()...),
			consume,
		)
		return out
	}
	if isStructRef(f.Ref) && f.Ptr {
		out = append(out,
			jen.Id("p").Op(":=").New(jen.Id(f.Ref.Named.Name)),
			jen.List(jen.Id("n"), jen.Err()).Op(":=").Id("p").Dot("decodeAt").Call(jen.Id("it").Dot("Rest").Call(), jen.Nil()),
			jen.If(jen.Err().Op("!=").Nil()).Block(onErr()...),
			consume,
			x.Clone().Op("=").Id("p"),
		)
		return out
	}
	if u := f.Ref.Named; u != nil && u.Kind == TUnion {
		args := []jen.Code{jen.Id("it").Dot("Rest").Call()}
		if u.Union.Flattened {
			args = append(args, jen.Nil()) // a whole object: nothing to skip
		}
		out = append(out,
			jen.List(jen.Id("t"), jen.Id("n"), jen.Err()).Op(":=").Id("decode"+u.Name+"At").Call(args...),
			jen.If(jen.Err().Op("!=").Nil()).Block(onErr()...),
			consume,
			x.Clone().Op("=").Id("t"),
		)
		return out
	}
	out = append(out, jen.List(jen.Id("t"), jen.Err()).Op(":=").Add(e.decodeCall(f.Ref, f.SkipInvalid, val)))
	if f.MinLength > 0 {
		out = append(out, jen.If(jen.Err().Op("==").Nil()).Block(
			jen.Err().Op("=").Add(jx("MinLength")).Call(jen.String().Call(jen.Id("t")), jen.Lit(f.MinLength)),
		))
	}
	if f.Ref.MinItems > 0 {
		out = append(out, minItemsCheck("t", f.Ref.MinItems))
	}
	if m := f.Ref.Min; m != nil {
		out = append(out, jen.If(jen.Err().Op("==").Nil().Op("&&").Id("t").Op("<").Lit(int(*m))).Block(
			jen.Err().Op("=").Add(jx("Errorf")).Call(jx("ErrInvalidValue"), jen.Lit(fmt.Sprintf("less than the minimum %d", *m))),
		))
	}
	out = append(out, jen.If(jen.Err().Op("!=").Nil()).Block(onErr()...))
	if f.Ptr {
		out = append(out, x.Clone().Op("=").Op("&").Id("t"))
	} else {
		out = append(out, x.Clone().Op("=").Id("t"))
	}
	return out
}

// fieldEncode appends one member; it reports whether it uses err.
func (e *emitter) fieldEncode(f *Field) ([]jen.Code, bool) {
	x := jen.Id("x").Dot(f.Go)
	val := x.Clone()
	if f.Ptr && !isStructRef(f.Ref) {
		val = jen.Op("*").Add(x.Clone())
	}
	stmts := []jen.Code{
		jen.Id("b").Op("=").Add(jx("Sep")).Call(jen.Id("b")),
		jen.Id("b").Op("=").Append(jen.Id("b"), keyLit(f.JSON).Op("...")),
	}
	usesErr := false
	if s, ok := e.inlineEncode(f.Ref, val); ok {
		stmts = append(stmts, jen.Id("b").Op("=").Add(s))
	} else {
		usesErr = true
		stmts = append(stmts, jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(e.encodeCall(f.Ref, val)), jen.Err().Op("!=").Nil()).Block(returnErrAt(f.JSON)))
	}
	if omittable(f) {
		return []jen.Code{jen.If(x.Clone().Op("!=").Nil()).Block(stmts...)}, usesErr
	}
	if f.Ref.Named != nil && f.Ref.Named.Kind == TUnion {
		// A required union must be set.
		return append([]jen.Code{jen.If(x.Clone().Op("==").Nil()).Block(
			jen.Return(jen.Id("b"), jx("EncodeError").Call(jen.Lit(f.JSON), jen.Lit("required union value is nil"))),
		)}, stmts...), usesErr
	}
	return stmts, usesErr
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
	prim := ref
	conv := func(s *jen.Statement) *jen.Statement { return s }
	if t := ref.Named; t != nil {
		switch t.Kind {
		case TEnum:
			return jx("AppendString").Call(jen.Id("b"), jen.String().Call(val)), true
		case TIntEnum:
			return jx("AppendInt").Call(jen.Id("b"), jen.Int64().Call(val)), true
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
		return jx("AppendString").Call(jen.Id("b"), jen.String().Call(conv(val))), true
	case "bool":
		return jx("AppendBool").Call(jen.Id("b"), jen.Bool().Call(conv(val))), true
	case "int":
		return jx("AppendInt").Call(jen.Id("b"), jen.Int64().Call(conv(val))), true
	case "uint":
		return jx("AppendUint").Call(jen.Id("b"), jen.Uint64().Call(conv(val))), true
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
	if u.Union.Flattened {
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
	args := []jen.Code{jx("TrimSpace").Call(jen.Id("data"))}
	if u.Union.Flattened {
		args = append(args, jen.Nil())
	}
	f.Comment(fmt.Sprintf("UnmarshalJSON decodes a %s value that must be this variant.", u.Name))
	f.Func().Params(jen.Id("x").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.List(jen.Id("u"), jen.Err()).Op(":=").Id("decode"+u.Name).Call(args...),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("u").Assert(jen.Op("*").Id(t.Name)),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jx("Errorf").Call(jx("ErrInvalidValue"), jen.Lit("not a "+t.Name)))),
		jen.Op("*").Id("x").Op("=").Op("*").Id("v"),
		jen.Return(jen.Nil()),
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
		f.Comment(fmt.Sprintf("append%s appends v as a JSON object.", t.Name))
		f.Func().Id("append"+t.Name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(t.Name)).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("append"+t.Name+"Members").Call(jen.Append(jen.Id("b"), jen.LitRune('{')), jen.Id("v")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err())),
			jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}')), jen.Nil()),
		)
		f.Line()
		f.Comment(fmt.Sprintf("Unmarshal%s decodes one %s value.", t.Name, t.Name))
		f.Func().Id("Unmarshal"+t.Name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error()).Block(
			jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("decode"+t.Name).Call(jx("TrimSpace").Call(jen.Id("data")), jen.Nil())),
		)
		f.Line()
	}
	if !u.Flattened {
		f.Comment(fmt.Sprintf("Unmarshal%s decodes one %s value.", t.Name, t.Name))
		f.Func().Id("Unmarshal"+t.Name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error()).Block(
			jen.If(jen.Err().Op(":=").Add(jx("Validate")).Call(jen.Id("data")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("decode"+t.Name).Call(jx("TrimSpace").Call(jen.Id("data")))),
		)
		f.Line()
	}
	return nil
}

// decodeVariant decodes a struct variant from data with skip list sk.
func decodeVariant(v *Variant, sk jen.Code) []jen.Code {
	return []jen.Code{
		jen.Id("v").Op(":=").New(jen.Id(v.Type.Name)),
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Add(variantRecv(v, "v")).Dot("decodeAt").Call(jen.Id("data"), sk),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Lit(0), jen.Err()),
		),
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
			jen.Block(decodeVariant(u.Fallback, jen.Id("skip"))...),
		)
	}
	if u.Flattened {
		body = append(body, jen.If(jen.Len(jen.Id("skip")).Op(">").Lit(0)).Block(
			jen.Id("vskip").Op("=").Add(jx("Extend")).Call(jen.Id("skip"), jen.Lit(u.Tag)),
		))
	}
	if u.Fallback != nil {
		body = append(body, jen.If(jen.Op("!").Id("ok")).Block(decodeVariant(u.Fallback, jen.Id("vskip"))...))
	} else {
		body = append(body, jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil(), jen.Lit(0), jx("Missing").Call(jen.Lit(u.Tag)))))
	}
	var cases []jen.Code
	for _, v := range u.Variants {
		if v.Tag == "" {
			continue
		}
		cases = append(cases, jen.Case(jen.Lit(v.Tag)).Block(decodeVariant(v, jen.Id("vskip"))...))
	}
	if u.Fallback != nil {
		// The untagged branch named by its title: decoded without
		// skipping the tag, which it keeps as a member of its own, so the
		// object re-encodes byte for byte.
		sk := jen.Nil()
		if u.Flattened {
			sk = jen.Id("skip")
		}
		cases = append(cases, jen.Case(jen.Lit(u.FallbackTag)).Block(decodeVariant(u.Fallback, sk)...))
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
		var prefix string
		if v.Tag != "" {
			k, _ := json.Marshal(u.Tag)
			val, _ := json.Marshal(v.Tag)
			prefix = string(k) + ":" + string(val)
		}
		var stmts []jen.Code
		stmts = append(stmts, jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Break()))
		if members {
			stmts = append(stmts, jen.Return(variantRecv(v, "v").Dot("appendMembers").Call(jen.Id("b"), jen.Lit(prefix))))
		} else {
			stmts = append(stmts,
				jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('{')),
				jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(variantRecv(v, "v")).Dot("appendMembers").Call(jen.Id("b"), jen.Lit(prefix)),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err())),
				jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}')), jen.Nil()),
			)
		}
		ecases = append(ecases, jen.Case(jen.Op("*").Id(v.Type.Name)).Block(stmts...))
	}
	unk := []jen.Code{jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Break())}
	unk = append(unk, jen.Return(jx("EncUnknown").Call(jen.Id("b"), jen.Id("v").Dot("Raw"), jen.Lit(u.Tag), jen.Lit(members))))
	ecases = append(ecases, jen.Case(jen.Op("*").Id(u.Unknown.Name)).Block(unk...))
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
				body = decodeVariant(vs[0], sk)
			} else {
				var all []string
				for _, v := range vs {
					body = append(body, jen.If(hasAnyKey("data", v.Keys)).Block(decodeVariant(v, sk)...))
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
			stmts = append(stmts, jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Break()))
			if members {
				stmts = append(stmts, jen.Return(variantRecv(v, "v").Dot("appendMembers").Call(jen.Id("b"), jen.Lit(""))))
			} else {
				stmts = append(stmts, jen.Return(variantRecv(v, "v").Dot("appendJSON").Call(jen.Id("b"))))
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
			jen.Err().Op(":=").Id("x").Dot("decode").Call(jen.Id("data"), jen.Nil()),
			jen.Return(jen.Id("x"), jen.Err()),
		)
	case TEnum:
		var vals []jen.Code
		for _, v := range t.Values {
			vals = append(vals, jen.Id(v.Go))
		}
		body := []jen.Code{
			jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(jx("String")).Call(jen.Id("data")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(""), jen.Err())),
		}
		if t.Open {
			body = append(body, jen.Return(jen.Id(t.Name).Call(jen.Id("s")), jen.Nil()))
		} else {
			body = append(body,
				jen.Switch(jen.Id(t.Name).Call(jen.Id("s"))).Block(
					jen.Case(vals...).Block(jen.Return(jen.Id(t.Name).Call(jen.Id("s")), jen.Nil())),
				),
				jen.Return(jen.Lit(""), jx("Errorf").Call(jx("ErrInvalidValue"), jen.Lit("not a "+t.Name+": ").Op("+").Qual("strconv", "Quote").Call(jen.Id("s")))),
			)
		}
		sig.Block(body...)
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
		sig.Block(jen.Return(jen.Id("v").Dot("appendJSON").Call(jen.Id("b"))))
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
