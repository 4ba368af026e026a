package main

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// goType is the Go type expression of a Ref.
func goType(ref *Ref) *jen.Statement {
	switch {
	case ref.Named != nil:
		return jen.Id(ref.Named.Name)
	case ref.List:
		return jen.Index().Add(goType(ref.Elem))
	case ref.Map:
		return jen.Map(jen.String()).Add(goType(ref.Elem))
	}
	switch ref.Prim {
	case "string":
		return jen.String()
	case "bool":
		return jen.Bool()
	case "int":
		return jen.Id(fmt.Sprintf("int%d", ref.Bits))
	case "uint":
		return jen.Id(fmt.Sprintf("uint%d", ref.Bits))
	case "float":
		return jen.Float64()
	case "raw", "object":
		return jen.Qual(segJSON, "RawMessage")
	}
	panic("goType: unknown prim " + ref.Prim)
}

func fieldType(f *Field) *jen.Statement {
	if f.Ptr {
		return jen.Op("*").Add(goType(f.Ref))
	}
	return goType(f.Ref)
}

func fieldDoc(f *Field) []string {
	lines := append([]string{}, f.Doc...)
	var notes []string
	switch {
	case f.Required:
		notes = append(notes, "Required.")
	case f.Default != nil:
		notes = append(notes, "Optional; default "+compactJSON(f.Default)+" when absent.")
	default:
		notes = append(notes, "Optional; nil when absent.")
	}
	if f.OnError {
		notes = append(notes, "A malformed value decodes to the default.")
	}
	if f.SkipInvalid {
		notes = append(notes, "Items that fail to decode are dropped.")
	}
	if f.OnNull {
		notes = append(notes, "null decodes as empty.")
	}
	if f.Ref.Min != nil {
		notes = append(notes, fmt.Sprintf("At least %d.", *f.Ref.Min))
	}
	if f.Ref.MinItems > 0 {
		notes = append(notes, fmt.Sprintf("At least %d item(s).", f.Ref.MinItems))
	}
	if f.MinLength > 0 {
		notes = append(notes, fmt.Sprintf("At least %d character(s).", f.MinLength))
	}
	if f.JSON == "_meta" {
		notes = append(notes, "Raw JSON object, kept byte for byte.")
	}
	if len(lines) > 0 {
		lines = append(lines, "")
	}
	return append(lines, strings.Join(notes, " "))
}

func compactJSON(raw []byte) string {
	var out []byte
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case inStr:
			out = append(out, c)
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

func (e *emitter) types(f *jen.File) error {
	for _, t := range e.m.Types {
		switch t.Kind {
		case TStruct:
			e.structDecl(f, t)
		case TAlias:
			topComment(f, typeDoc(t, ""))
			f.Comment("")
			f.Comment(fmt.Sprintf("The schema defines it as %s, so it is that Go type.", t.Alias.Schema))
			f.Type().Id(t.Name).Op("=").Id(t.Alias.Name)
		case TDefined:
			topComment(f, typeDoc(t, ""))
			f.Comment("")
			f.Comment(fmt.Sprintf("It has the members of %s; convert with %s(v) when needed.", t.Base.Name, t.Base.Name))
			f.Type().Id(t.Name).Id(t.Base.Name)
		case TUnion:
			e.unionDecl(f, t)
		case TEnum, TIntEnum:
			e.enumDecl(f, t)
		case TScalar:
			topComment(f, typeDoc(t, ""))
			f.Type().Id(t.Name).Add(goType(t.Scalar))
		case TNull:
			topComment(f, typeDoc(t, ""))
			f.Comment("")
			f.Comment("It encodes as JSON null.")
			f.Type().Id(t.Name).Struct()
		case TRaw:
			topComment(f, typeDoc(t, ""))
			f.Comment("")
			f.Comment("The schema allows any JSON value here; it is kept verbatim.")
			f.Type().Id(t.Name).Qual(segJSON, "RawMessage")
		default:
			return fmt.Errorf("type %s: unknown kind", t.Name)
		}
		f.Line()
	}
	return nil
}

func (e *emitter) structDecl(f *jen.File, t *Type) {
	if t.IsUnknown {
		topComment(f, typeDoc(t, ""))
		f.Type().Id(t.Name).Struct(
			jen.Comment("Raw is the variant's JSON object, verbatim."),
			jen.Id("Raw").Qual(segJSON, "RawMessage").Tag(map[string]string{"json": "-"}),
		)
		return
	}
	topComment(f, typeDoc(t, ""))
	var fields []jen.Code
	for _, fd := range t.Fields {
		tags := map[string]string{"json": fd.JSON}
		if rules, _ := memberRules(fd); rules != "" { // its error is structCodec's
			tags["acp"] = rules
		}
		fields = append(fields, comment(fieldDoc(fd)...).Id(fd.Go).Add(fieldType(fd)).Tag(tags))
	}
	if t.Flat != nil {
		fields = append(fields, comment(t.Flat.Doc...).Id(t.Flat.Go).Add(goType(t.Flat.Ref)).Tag(map[string]string{"json": "-"}))
	}
	if sharesMembers(t) {
		fields = append(fields, comment(
			"verbatim re-encodes non-canonical input (member order, explicit",
			"nulls) byte for byte while the value is unchanged.",
		).Id("verbatim").Qual(jsonxPkg, "Verbatim"))
	}
	if !t.NoExtra {
		fields = append(fields, comment(
			"Extra holds the members the schema does not define, verbatim, in order; encoded last.",
		).Id("Extra").Id("Members").Tag(map[string]string{"json": "-"}))
	}
	f.Type().Id(t.Name).Struct(fields...)
}

func (e *emitter) unionDecl(f *jen.File, t *Type) {
	u := t.Union
	lines := []string{}
	if t.Schema != "" {
		lines = append(lines, fmt.Sprintf("%s is the ACP schema union %s.", t.Name, t.Schema))
	} else {
		lines = append(lines, fmt.Sprintf("%s is the union of the members that depend on the variant.", t.Name))
	}
	if len(t.Doc) > 0 {
		lines = append(lines, "")
		lines = append(lines, t.Doc...)
	}
	lines = append(lines, "")
	switch {
	case u.Tag != "":
		lines = append(lines, fmt.Sprintf("The variant is chosen by the %q member:", u.Tag))
	default:
		lines = append(lines, "The variant is chosen by the JSON shape of the value:")
	}
	lines = append(lines, "")
	for _, v := range u.Variants {
		recv := v.Type.Name
		if v.Ptr {
			recv = "*" + recv
		}
		switch {
		case u.Tag != "" && v.Tag != "":
			lines = append(lines, fmt.Sprintf("  - %q: %s", v.Tag, recv))
		case u.Tag != "":
			if u.LenientTag {
				lines = append(lines, fmt.Sprintf("  - absent, null or not a string: %s (which keeps a present one)", recv))
			} else {
				lines = append(lines, fmt.Sprintf("  - absent: %s", recv))
			}
		case len(v.Keys) > 0:
			lines = append(lines, fmt.Sprintf("  - %s with %s: %s", v.JSONKind, strings.Join(quoteAll(v.Keys), " or "), recv))
		default:
			lines = append(lines, fmt.Sprintf("  - %s: %s", v.JSONKind, recv))
		}
	}
	if u.Unknown != nil {
		lines = append(lines, fmt.Sprintf("  - any other: *%s (kept verbatim)", u.Unknown.Name))
	}
	topComment(f, lines)
	f.Type().Id(t.Name).Interface(jen.Id(marker(t)).Params())
	f.Line()
	vs := append([]*Variant{}, u.Variants...)
	if u.Unknown != nil {
		vs = append(vs, u.Unknown.VariantOf[0])
	}
	for _, v := range vs {
		recv := jen.Id(v.Type.Name)
		if v.Ptr {
			recv = jen.Op("*").Id(v.Type.Name)
		}
		f.Func().Params(recv).Id(marker(t)).Params().Block()
	}
}

func marker(t *Type) string { return "is" + t.Name }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func (e *emitter) enumDecl(f *jen.File, t *Type) {
	what := " (a closed enum: other values are rejected)"
	if t.Open {
		what = " (an open enum: values not listed here are kept)"
	}
	topComment(f, typeDoc(t, what))
	base := jen.String()
	if t.Kind == TIntEnum {
		base = jen.Int32()
	}
	f.Type().Id(t.Name).Add(base)
	f.Line()
	var defs []jen.Code
	for _, v := range t.Values {
		doc := v.Doc
		if len(doc) == 0 {
			doc = []string{v.Title}
		}
		val := fmt.Sprintf("%q", v.Str)
		if t.Kind == TIntEnum {
			val = fmt.Sprint(v.Int)
		}
		head := fmt.Sprintf("%s is %s.", v.Go, val)
		if len(doc) == 0 || doc[0] == "" {
			doc = []string{head}
		} else {
			doc = append([]string{head, ""}, doc...)
		}
		var lit jen.Code = jen.Lit(v.Str)
		if t.Kind == TIntEnum {
			lit = jen.Lit(int(v.Int))
		}
		defs = append(defs, comment(doc...).Id(v.Go).Id(t.Name).Op("=").Add(lit))
	}
	f.Comment(fmt.Sprintf("The values of %s.", t.Name))
	f.Const().Defs(defs...)
}
