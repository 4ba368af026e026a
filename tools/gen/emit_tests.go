package main

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// The generated round-trip test: a sample document for every def (and every
// variant of every union) synthesized from the model, so that a schema bump
// is covered without anyone writing fixtures. Full samples set every member
// (plus an unknown one) in canonical order and must re-encode byte for byte;
// minimal samples set only required members and must survive
// decode → encode → decode.

const (
	sampleUnknownMember = `"zzUnknown":[1,{"a":null}]`
	sampleRaw           = `[1,"two",{"3":null}]`
	sampleObject        = `{"n":12345678901234567890}`
	sampleUnknownTag    = "zz_not_in_schema"
)

type sampler struct {
	depth int
}

func (s *sampler) ref(ref *Ref, full bool) string {
	switch {
	case ref.List:
		if !full && ref.MinItems == 0 {
			return "[]"
		}
		items := make([]string, max(ref.MinItems, 1))
		for i := range items {
			items[i] = s.ref(ref.Elem, full)
		}
		return "[" + strings.Join(items, ",") + "]"
	case ref.Map:
		if !full {
			return "{}"
		}
		return `{"k":` + s.ref(ref.Elem, full) + "}"
	case ref.Named != nil:
		return s.named(ref.Named, full)
	}
	return samplePrim(ref)
}

func samplePrim(ref *Ref) string {
	switch ref.Prim {
	case "string":
		return `"s"`
	case "bool":
		return "true"
	case "int":
		if ref.Min != nil && *ref.Min > -7 {
			return fmt.Sprint(*ref.Min)
		}
		return "-7"
	case "uint":
		if ref.Min != nil && *ref.Min > 7 {
			return fmt.Sprint(*ref.Min)
		}
		return "7"
	case "float":
		return "1.5"
	case "raw":
		return sampleRaw
	case "object":
		return sampleObject
	}
	panic("samplePrim " + ref.Prim)
}

func (s *sampler) named(t *Type, full bool) string {
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > 40 {
		panic("sample recursion through " + t.Name)
	}
	switch t.Kind {
	case TStruct:
		return "{" + strings.Join(s.members(t, full), ",") + "}"
	case TDefined:
		return "{" + strings.Join(s.members(t.Base, full), ",") + "}"
	case TEnum:
		return fmt.Sprintf("%q", t.Values[0].Str)
	case TIntEnum:
		return fmt.Sprint(t.Values[0].Int)
	case TScalar:
		return s.ref(t.Scalar, full)
	case TRaw:
		return sampleRaw
	case TNull:
		return "null"
	case TUnion:
		return s.variant(t.Union.Variants[0], full)
	}
	panic("sample " + t.Name)
}

// members are the sample members of an object, in encoding order.
func (s *sampler) members(t *Type, full bool) []string {
	var out []string
	for _, f := range t.Fields {
		if !full && !f.Required {
			continue
		}
		out = append(out, fmt.Sprintf("%q:%s", f.JSON, s.ref(f.Ref, full)))
	}
	if t.Flat != nil {
		out = append(out, s.variantMembers(t.Flat.Ref.Named.Union.Variants[0], full)...)
	} else if full && !t.IsUnknown {
		out = append(out, sampleUnknownMember)
	}
	return out
}

// variant is the JSON of one union variant.
func (s *sampler) variant(v *Variant, full bool) string {
	u := v.Union.Union
	if u.Tag == "" {
		switch v.JSONKind {
		case "object":
			return s.named(v.Type, full)
		case "null":
			return "null"
		}
		return s.ref(v.Type.Scalar, full)
	}
	return "{" + strings.Join(s.variantMembers(v, full), ",") + "}"
}

func (s *sampler) variantMembers(v *Variant, full bool) []string {
	u := v.Union.Union
	var out []string
	if v.Tag != "" {
		out = append(out, fmt.Sprintf("%q:%q", u.Tag, v.Tag))
	}
	st := v.Type
	if st.Kind == TDefined {
		st = st.Base
	}
	if v.JSONKind != "" && v.JSONKind != "object" {
		panic("variantMembers of a scalar variant")
	}
	return append(out, s.members(st, full)...)
}

// sampleDecoder is a func([]byte) (any, error) that decodes a value of t
// as a user would: a union through its Unmarshal function, any other type
// through json.Unmarshal (which calls its UnmarshalJSON).
func (e *emitter) sampleDecoder(t *Type) *jen.Statement {
	if t.Kind == TUnion {
		return jen.Func().Params(jen.Id("b").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
			jen.Return(jen.Qual(e.pkgPath, "Unmarshal"+t.Name).Call(jen.Id("b"))),
		)
	}
	return jen.Func().Params(jen.Id("b").Index().Byte()).Params(jen.Any(), jen.Error()).Block(
		jen.Id("v").Op(":=").New(jen.Qual(e.pkgPath, t.Name)),
		jen.Return(jen.Id("v"), jen.Qual(segJSON, "Unmarshal").Call(jen.Id("b"), jen.Id("v"))),
	)
}

func (e *emitter) roundTripTest(f *jen.File) {
	s := &sampler{}
	var rows []jen.Code
	add := func(name string, decode jen.Code, full, min string) {
		rows = append(rows, jen.Values(jen.Dict{
			jen.Id("name"):   jen.Lit(name),
			jen.Id("decode"): decode,
			jen.Id("full"):   jen.Lit(full),
			jen.Id("min"):    jen.Lit(min),
		}))
	}
	for _, t := range e.m.Types {
		switch {
		case t.Kind == TUnion && !t.Union.Flattened:
			dec := e.sampleDecoder(t)
			for _, v := range t.Union.Variants {
				add(t.Name+"/"+v.Type.Name, dec, s.variant(v, true), s.variant(v, false))
			}
			if u := t.Union.Unknown; u != nil {
				unk := fmt.Sprintf(`{%q:%q,"k":[1]}`, t.Union.Tag, sampleUnknownTag)
				add(t.Name+"/"+u.Name, dec, unk, unk)
			}
		case t.Schema != "" && t.Kind != TUnion && t.Kind != TAlias && len(t.VariantOf) == 0:
			add(t.Name, e.sampleDecoder(t), s.named(t, true), s.named(t, false))
		}
	}
	f.Comment("samples has a document for every def and every union variant.")
	f.Var().Id("samples").Op("=").Index().Struct(
		jen.Id("name").String(),
		jen.Id("decode").Func().Params(jen.Index().Byte()).Params(jen.Any(), jen.Error()),
		jen.List(jen.Id("full"), jen.Id("min")).String(),
	).Values(rows...)
	f.Line()
	f.Comment("marshal calls the value's own MarshalJSON when it has one (json.Marshal")
	f.Comment("would compact raw bytes the codec keeps verbatim), else json.Marshal.")
	f.Func().Id("marshal").Params(jen.Id("v").Any()).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.If(jen.List(jen.Id("m"), jen.Id("ok")).Op(":=").Id("v").Assert(jen.Qual(segJSON, "Marshaler")), jen.Id("ok")).Block(
			jen.Return(jen.Id("m").Dot("MarshalJSON").Call()),
		),
		jen.Return(jen.Qual(segJSON, "Marshal").Call(jen.Id("v"))),
	)
	f.Line()
	f.Func().Id("TestMain").Params(jen.Id("m").Op("*").Qual("testing", "M")).Block(
		jen.Qual("go.uber.org/goleak", "VerifyTestMain").Call(jen.Id("m")),
	)
	f.Line()
	f.Comment("TestSDK2_RoundTripEveryDef: every def (SDK-2) decodes from a full sample and")
	f.Comment("re-encodes byte for byte, unknown members included (SDK-5); a minimal")
	f.Comment("sample survives decode → encode → decode.")
	f.Func().Id("TestSDK2_RoundTripEveryDef").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Id("samples")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("s").Dot("name"), jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
				jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("s").Dot("decode").Call(jen.Index().Byte().Call(jen.Id("s").Dot("full"))),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("marshal").Call(jen.Id("v")),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.Qual(requirePkg, "Equal").Call(jen.Id("t"), jen.Id("s").Dot("full"), jen.String().Call(jen.Id("out"))),
				jen.Line(),
				jen.List(jen.Id("v"), jen.Err()).Op("=").Id("s").Dot("decode").Call(jen.Index().Byte().Call(jen.Id("s").Dot("min"))),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.List(jen.Id("out"), jen.Err()).Op("=").Qual(segJSON, "Marshal").Call(jen.Id("v")),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.List(jen.Id("again"), jen.Err()).Op(":=").Id("s").Dot("decode").Call(jen.Id("out")),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("re-decoding %s"), jen.Id("out")),
				jen.Qual(requirePkg, "Equal").Call(jen.Id("t"), jen.Id("v"), jen.Id("again")),
			)),
		),
	)
	f.Line()
	e.reversedOrderTest(f)
	f.Comment("FuzzSDK3_Unions feeds every union (and every def) arbitrary bytes: decoding")
	f.Comment("never panics, and whatever decodes re-encodes and decodes equal (SDK-3, SDK-5).")
	f.Comment("The samples are the seed corpus, so it runs as an ordinary test.")
	f.Func().Id("FuzzSDK3_Unions").Params(jen.Id("f").Op("*").Qual("testing", "F")).Block(
		jen.For(jen.List(jen.Id("i"), jen.Id("s")).Op(":=").Range().Id("samples")).Block(
			jen.Id("f").Dot("Add").Call(jen.Id("i"), jen.Index().Byte().Call(jen.Id("s").Dot("full"))),
			jen.Id("f").Dot("Add").Call(jen.Id("i"), jen.Index().Byte().Call(jen.Id("s").Dot("min"))),
		),
		jen.Id("f").Dot("Fuzz").Call(jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T"), jen.Id("i").Int(), jen.Id("data").Index().Byte()).Block(
			jen.Id("s").Op(":=").Id("samples").Index(jen.Uint().Call(jen.Id("i")).Op("%").Uint().Call(jen.Len(jen.Id("samples")))),
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("s").Dot("decode").Call(jen.Id("data")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return()),
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("marshal").Call(jen.Id("v")),
			jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s: re-encoding %q"), jen.Id("s").Dot("name"), jen.Id("data")),
			jen.List(jen.Id("again"), jen.Err()).Op(":=").Id("s").Dot("decode").Call(jen.Id("out")),
			jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s: re-decoding %s"), jen.Id("s").Dot("name"), jen.Id("out")),
			jen.Qual(requirePkg, "Equal").Call(jen.Id("t"), jen.Id("v"), jen.Id("again"), jen.Lit("%s: %s"), jen.Id("s").Dot("name"), jen.Id("out")),
		)),
	)
}

const requirePkg = "github.com/stretchr/testify/require"

// reversedOrderTest emits TestSDK5_ReversedMemberOrderRoundTrips: every
// sample with the members of each of its objects in reverse order (tags
// last, unknown members first) re-encodes byte for byte, so that an
// object whose members no single layout sees (a flattened union's, a
// variant's with two tags) shows up here.
func (e *emitter) reversedOrderTest(f *jen.File) {
	b := func() *jen.Statement { return jen.Id("b") }
	f.Comment("reversed is data, compact JSON, with the members of every object in reverse order.")
	f.Func().Id("reversed").Params(jen.Id("data").Index().Byte()).Index().Byte().Block(
		jen.Switch(jx("KindOf").Call(jen.Id("data"))).Block(
			jen.Case(jx("KindObject")).Block(
				jen.Var().Id("it").Qual(jsonxPkg, "ObjectIter"),
				jen.Var().Id("members").Index().Index().Byte(),
				jen.For(jen.Err().Op(":=").Id("it").Dot("Reset").Call(jen.Id("data")), jen.Err().Op("==").Nil().Op("&&").Id("it").Dot("Next").Call(), jen.Empty()).Block(
					jen.List(jen.Id("m"), jen.Id("v")).Op(":=").List(jen.Id("it").Dot("Member").Call(), jen.Id("it").Dot("Value").Call()),
					jen.Id("members").Op("=").Append(jen.Id("members"), jen.Append(jen.Append(jen.Index().Byte().Values(), jen.Id("m").Index(jen.Empty(), jen.Len(jen.Id("m")).Op("-").Len(jen.Id("v"))).Op("...")), jen.Id("reversed").Call(jen.Id("v")).Op("..."))),
				),
				jen.Id("b").Op(":=").Index().Byte().Values(jen.LitRune('{')),
				jen.For(jen.Id("i").Op(":=").Len(jen.Id("members")).Op("-").Lit(1), jen.Id("i").Op(">=").Lit(0), jen.Id("i").Op("--")).Block(
					jen.If(jen.Len(b()).Op(">").Lit(1)).Block(b().Op("=").Append(b(), jen.LitRune(','))),
					b().Op("=").Append(b(), jen.Id("members").Index(jen.Id("i")).Op("...")),
				),
				jen.Return(jen.Append(b(), jen.LitRune('}'))),
			),
			jen.Case(jx("KindArray")).Block(
				jen.Var().Id("it").Qual(jsonxPkg, "ArrayIter"),
				jen.Id("b").Op(":=").Index().Byte().Values(jen.LitRune('[')),
				jen.For(jen.Err().Op(":=").Id("it").Dot("Reset").Call(jen.Id("data")), jen.Err().Op("==").Nil().Op("&&").Id("it").Dot("Next").Call(), jen.Empty()).Block(
					jen.If(jen.Len(b()).Op(">").Lit(1)).Block(b().Op("=").Append(b(), jen.LitRune(','))),
					b().Op("=").Append(b(), jen.Id("reversed").Call(jen.Id("it").Dot("Value").Call()).Op("...")),
				),
				jen.Return(jen.Append(b(), jen.LitRune(']'))),
			),
		),
		jen.Return(jen.Id("data")),
	)
	f.Line()
	f.Comment("TestSDK5_ReversedMemberOrderRoundTrips: every sample with each object's")
	f.Comment("members in reverse order (tags last, unknown members first) re-encodes byte")
	f.Comment("for byte: decoding keeps a peer's member order (SDK-5).")
	f.Func().Id("TestSDK5_ReversedMemberOrderRoundTrips").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Id("samples")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("doc")).Op(":=").Range().Index().String().Values(jen.Id("s").Dot("full"), jen.Id("s").Dot("min"))).Block(
				jen.Id("in").Op(":=").Id("reversed").Call(jen.Index().Byte().Call(jen.Id("doc"))),
				jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("s").Dot("decode").Call(jen.Id("in")),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s: %s"), jen.Id("s").Dot("name"), jen.Id("in")),
				jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("marshal").Call(jen.Id("v")),
				jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s: %s"), jen.Id("s").Dot("name"), jen.Id("in")),
				jen.Qual(requirePkg, "Equal").Call(jen.Id("t"), jen.String().Call(jen.Id("in")), jen.String().Call(jen.Id("out")), jen.Id("s").Dot("name")),
			),
		),
	)
	f.Line()
}
