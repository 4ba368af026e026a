package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// types prints types.go: one declaration per type of the model.
func (e *emitter) types(g *printer) error {
	for _, t := range e.m.Types {
		switch t.Kind {
		case TStruct:
			structDecl(g, t)
		case TAlias:
			g.Doc(typeDoc(t, "")...)
			g.P("//")
			g.P("// The schema defines it as %s, so it is that Go type.", t.Alias.Schema)
			g.P("type %s = %s", t.Name, t.Alias.Name)
		case TDefined:
			g.Doc(typeDoc(t, "")...)
			g.P("//")
			g.P("// It has the members of %s; convert with %s(v) when needed.", t.Base.Name, t.Base.Name)
			g.P("type %s %s", t.Name, t.Base.Name)
		case TUnion:
			unionDecl(g, t)
		case TEnum, TIntEnum:
			enumDecl(g, t)
		case TScalar:
			g.Doc(typeDoc(t, "")...)
			if p := patternOf(t.Scalar); p != nil {
				g.P("//\n// %s", patternNote(t.Scalar, p))
			}
			g.P("type %s %s", t.Name, goType(t.Scalar))
		case TNull:
			g.Doc(typeDoc(t, "")...)
			g.P("//")
			g.P("// It encodes as JSON null.")
			g.P("type %s struct{}", t.Name)
		case TRaw:
			g.Doc(typeDoc(t, "")...)
			g.P("//")
			g.P("// The schema allows any JSON value here; it is kept verbatim.")
			g.P("type %s json.RawMessage", t.Name)
		default:
			return fmt.Errorf("type %s: unknown kind", t.Name)
		}
		g.P("")
	}
	return nil
}

// goType is the Go type expression of a Ref.
func goType(ref *Ref) string {
	switch {
	case ref.Named != nil:
		return ref.Named.Name
	case ref.List:
		return "[]" + goType(ref.Elem)
	case ref.Map:
		return "map[string]" + goType(ref.Elem)
	}
	switch ref.Prim {
	case "string", "bool":
		return ref.Prim
	case "int", "uint":
		return fmt.Sprintf("%s%d", ref.Prim, ref.Bits)
	case "float":
		return "float64"
	case "raw", "object":
		return "json.RawMessage"
	}
	panic("goType: unknown prim " + ref.Prim)
}

func fieldType(f *Field) string {
	if f.Ptr {
		return "*" + goType(f.Ref)
	}
	return goType(f.Ref)
}

// structDecl declares an object: its members with their json names and
// acp rules, the flattened union's field, and what keeps the rest.
func structDecl(g *printer, t *Type) {
	g.Doc(typeDoc(t, "")...)
	g.P("type %s struct {", t.Name)
	if t.IsUnknown {
		g.P("// Raw is the variant's JSON object, verbatim.")
		g.P("Raw json.RawMessage `json:\"-\"`")
		g.P("}")
		return
	}
	for _, fd := range t.Fields {
		tags := map[string]string{"json": fd.JSON}
		if rules, _ := memberRules(fd); rules != "" { // its error is structCodec's
			tags["acp"] = rules
		}
		g.Doc(fieldDoc(fd)...)
		g.P("%s %s %s", fd.Go, fieldType(fd), structTag(tags))
	}
	if t.Flat != nil {
		g.Doc(t.Flat.Doc...)
		g.P("%s %s `json:\"-\"`", t.Flat.Go, goType(t.Flat.Ref))
	}
	if sharesMembers(t) {
		g.P(`// verbatim re-encodes non-canonical input (member order, explicit
// nulls) byte for byte while the value is unchanged.
verbatim jsonx.Verbatim`)
	}
	if !t.NoExtra {
		g.P("// Extra holds the members the schema does not define, verbatim, in order; encoded last.")
		g.P("Extra Members `json:\"-\"`")
	}
	g.P("}")
}

// structTag renders a struct tag, keys sorted.
func structTag(items map[string]string) string {
	var keys []string
	for k := range items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%q", k, items[k]))
	}
	tag := strings.Join(parts, " ")
	if strconv.CanBackquote(tag) {
		return "`" + tag + "`"
	}
	return strconv.Quote(tag)
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
	if p := patternOf(f.Ref); p != nil {
		notes = append(notes, patternNote(f.Ref, p))
	}
	if f.JSON == "_meta" {
		notes = append(notes, "Raw JSON object, kept byte for byte.")
	}
	if len(lines) > 0 {
		lines = append(lines, "")
	}
	return append(lines, strings.Join(notes, " "))
}

// compactJSON is raw JSON without whitespace outside strings.
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

// typeDoc is the doc comment of a type: it starts with the Go name (Go doc
// convention), names the schema def, then carries the schema description.
func typeDoc(t *Type, what string) []string {
	var lines []string
	if t.Schema != "" {
		lines = append(lines, fmt.Sprintf("%s is the ACP schema type %s%s.", t.Name, t.Schema, what))
	} else {
		lines = append(lines, synthesizedDoc(t)+what+".")
	}
	if len(t.Doc) > 0 {
		lines = append(lines, "")
		lines = append(lines, t.Doc...)
	}
	return lines
}

// unionDecl declares a union's sealed interface, with a doc listing which
// variant each tag or JSON shape selects, and the variants' marker methods.
func unionDecl(g *printer, t *Type) {
	u := t.Union
	var lines []string
	if t.Schema != "" {
		lines = append(lines, fmt.Sprintf("%s is the ACP schema union %s.", t.Name, t.Schema))
	} else {
		lines = append(lines, fmt.Sprintf("%s is the union of the members that depend on the variant.", t.Name))
	}
	if len(t.Doc) > 0 {
		lines = append(lines, "")
		lines = append(lines, t.Doc...)
	}
	if u.Tag != "" {
		lines = append(lines, "", fmt.Sprintf("The variant is chosen by the %q member:", u.Tag), "")
	} else {
		lines = append(lines, "", "The variant is chosen by the JSON shape of the value:", "")
	}
	for _, v := range u.Variants {
		lines = append(lines, "  - "+variantChoice(v))
	}
	if u.Unknown != nil {
		lines = append(lines, fmt.Sprintf("  - any other: *%s (kept verbatim)", u.Unknown.Name))
	}
	g.Doc(lines...)
	g.P("type %s interface {", t.Name)
	g.P("%s()", marker(t))
	g.P("}")
	g.P("")
	vs := append([]*Variant{}, u.Variants...)
	if u.Unknown != nil {
		vs = append(vs, u.Unknown.VariantOf[0])
	}
	for _, v := range vs {
		g.P("func (%s) %s() {}", variantRecvType(v), marker(t))
	}
}

// variantChoice is what selects the variant v, and its Go type, for its
// union's doc.
func variantChoice(v *Variant) string {
	u, recv := v.Union.Union, variantRecvType(v)
	switch {
	case u.Tag != "" && v.Tag != "":
		return fmt.Sprintf("%q: %s", v.Tag, recv)
	case u.Tag != "" && u.LenientTag:
		return fmt.Sprintf("absent, null or not a string: %s (which keeps a present one)", recv)
	case u.Tag != "":
		return fmt.Sprintf("absent: %s", recv)
	case len(v.Keys) > 0:
		return fmt.Sprintf("%s with %s: %s", v.JSONKind, strings.Join(quoteAll(v.Keys), " or "), recv)
	}
	return fmt.Sprintf("%s: %s", v.JSONKind, recv)
}

// variantRecvType is the type that implements the union for v: *V or V.
func variantRecvType(v *Variant) string {
	if v.Ptr {
		return "*" + v.Type.Name
	}
	return v.Type.Name
}

func marker(t *Type) string { return "is" + t.Name }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// enumDecl declares an enum's type and one constant per value.
func enumDecl(g *printer, t *Type) {
	what, base := " (a closed enum: other values are rejected)", "string"
	if t.Open {
		what = " (an open enum: values not listed here are kept)"
	}
	if t.Kind == TIntEnum {
		base = "int32"
	}
	g.Doc(typeDoc(t, what)...)
	g.P("type %s %s", t.Name, base)
	g.P("")
	g.P("// The values of %s.", t.Name)
	g.P("const (")
	for _, v := range t.Values {
		val := fmt.Sprintf("%q", v.Str)
		if t.Kind == TIntEnum {
			val = fmt.Sprint(v.Int)
		}
		doc := v.Doc
		if len(doc) == 0 {
			doc = []string{v.Title}
		}
		head := fmt.Sprintf("%s is %s.", v.Go, val)
		if doc[0] == "" {
			doc = []string{head}
		} else {
			doc = append([]string{head, ""}, doc...)
		}
		g.Doc(doc...)
		g.P("%s %s = %s", v.Go, t.Name, val)
	}
	g.P(")")
}

// patternOf is the pattern of a string, or of a list's items or a map's
// values; nil when there is none.
func patternOf(ref *Ref) *Pattern {
	if ref.List || ref.Map {
		return patternOf(ref.Elem)
	}
	return ref.Pattern
}

// patternNote says in a doc comment which pattern decoding checks.
func patternNote(ref *Ref, p *Pattern) string {
	what := "Must"
	switch {
	case ref.List:
		what = "Each item must"
	case ref.Map:
		what = "Each value must"
	}
	return fmt.Sprintf("%s match the pattern %s (checked on decode).", what, p.Expr)
}
