package main

import (
	"fmt"
	"strings"
)

// An object's codec is shared code plus a little per type: its descriptor
// fieldsT (jsonx.FieldsOf, read at init from the struct's json names and acp
// tags), a decodeAt whose switch sends each member to the jsonx helper for
// its Go type, an appendField whose switch encodes member i, a setDefault
// where each schema default is spelled once, and JSON methods that are one
// call into jsonx. The walk over the members, both ways, is jsonx's.

// codecs prints every type's codec into codec.go.
func (e *emitter) codecs(g *printer) error {
	descriptors(g, e.m.Types)
	for _, t := range e.m.Types {
		switch t.Kind {
		case TStruct:
			if t.IsUnknown {
				unknownCodec(g, t)
				continue
			}
			if err := e.structCodec(g, t); err != nil {
				return err
			}
		case TDefined:
			variantJSON(g, t)
		case TUnion:
			if err := e.unionCodec(g, t); err != nil {
				return err
			}
		case TEnum:
			if !t.Open {
				e.need["dec:"+t.Name] = t
				g.P(`// UnmarshalJSON accepts only the listed values.
func (x *%[1]s) UnmarshalJSON(data []byte) error {
	return jsonx.UnmarshalValue(data, x, decode%[1]s)
}`, t.Name)
			}
		case TScalar:
			if t.Schema != "" && len(t.VariantOf) == 0 && patternOf(t.Scalar) != nil {
				// Its decoder checks a pattern, which json.Unmarshal must not
				// skip.
				e.need["dec:"+t.Name] = t
				g.P(`// UnmarshalJSON accepts only values that match the pattern.
func (x *%[1]s) UnmarshalJSON(data []byte) error {
	return jsonx.UnmarshalValue(data, x, decode%[1]s)
}`, t.Name)
			}
		case TNull:
			nullCodec(g, t)
		case TRaw:
			rawCodec(g, t)
		}
	}
	return nil
}

// descriptors declares every object's descriptor, fieldsT, read from its
// declaration (the members' json names and acp rules) at init.
func descriptors(g *printer, types []*Type) {
	var defs []string
	for _, t := range types {
		if t.Kind == TStruct && !t.IsUnknown {
			defs = append(defs, fmt.Sprintf("fields%[1]s = jsonx.FieldsOf((*%[1]s)(nil))", t.Name))
		}
	}
	if len(defs) == 0 {
		return
	}
	g.P("// The objects' descriptors: their members' names and rules, from their declarations.")
	g.P("var (\n%s\n)", strings.Join(defs, "\n"))
	g.P("")
}

func nullCodec(g *printer, t *Type) {
	g.P(`// MarshalJSON encodes null.
func (%[1]s) MarshalJSON() ([]byte, error) {
	return []byte("null"), nil
}
// UnmarshalJSON accepts only null.
func (*%[1]s) UnmarshalJSON(data []byte) error {
	if !jsonx.IsNull(data) {
		return jsonx.TypeError("null", data)
	}
	return nil
}`, t.Name)
}

func rawCodec(g *printer, t *Type) {
	g.P(`// MarshalJSON emits the raw value after checking it is valid JSON (null when empty).
func (x %[1]s) MarshalJSON() ([]byte, error) {
	return jsonx.EncRaw(nil, json.RawMessage(x))
}
// UnmarshalJSON keeps a copy of the value.
func (x *%[1]s) UnmarshalJSON(data []byte) error {
	if err := jsonx.Validate(data); err != nil {
		return err
	}
	*x = %[1]s(jsonx.Raw(data))
	return nil
}`, t.Name)
}

// structCodec prints an object's decodeAt, appendField, setDefault,
// isDefault, the methods of an object whose members a flattened union
// shares, and its JSON methods.
func (e *emitter) structCodec(g *printer, t *Type) error {
	for _, fd := range t.Fields {
		if _, err := memberRules(fd); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name, fd.Go, err)
		}
	}
	if err := e.decodeAt(g, t); err != nil {
		return err
	}
	if len(t.Fields) > 0 {
		e.appendField(g, t)
	}
	e.setDefault(g, t)
	if hasIsDefault(t) {
		// Member i encoded as it is and as its default (scratch value d).
		g.P(`func (x *%[1]s) isDefault(i int) bool {
	var d %[1]s
	d.setDefault(i)
	return jsonx.SameField(x.appendField, d.appendField, i)
}
`, t.Name)
	}
	if t.Flat != nil {
		appendMembers(g, t)
	}
	g.P("")
	if keepsVerbatim(t) {
		g.P(`// appendJSON appends x as it arrived while it is unchanged.
func (x *%[1]s) appendJSON(b []byte) ([]byte, error) {
	return x.verbatim.Append(b, x.appendCanonical)
}

func (x *%[1]s) appendCanonical(b []byte) ([]byte, error) {
	return jsonx.Braces(%[2]s)
}
`, t.Name, appendMembersOf(t, "x", "append(b, '{')", `""`))
	}
	if len(t.VariantOf) > 0 {
		variantJSON(g, t)
	} else {
		objectJSON(g, t)
	}
	return nil
}

// objectJSON prints the JSON methods of an object that is not a union's
// variant.
func objectJSON(g *printer, t *Type) {
	marshal := appendObject(t, "x", "make([]byte, 0, 256)")
	if !keepsVerbatim(t) && t.Flat == nil {
		marshal = marshalCall(t, "x")
	}
	g.P(`// MarshalJSON encodes x: known members in schema order, then Extra.
func (x %[1]s) MarshalJSON() ([]byte, error) {
	return %[2]s
}

// UnmarshalJSON checks that data is valid JSON, then decodes it into x, replacing its contents.
func (x *%[1]s) UnmarshalJSON(data []byte) error {
	return jsonx.Unmarshal(data, x, x.decodeAt)
}
`, t.Name, marshal)
}

// decodeAt prints the object's decoder: jsonx.Decoder walks the members
// and the switch decodes each known one; then the defaults of absent
// members, and the flattened union from what is left.
func (e *emitter) decodeAt(g *printer, t *Type) error {
	extra, next := "nil", "d.Next()"
	if !t.NoExtra {
		// A member no case takes is kept in Extra by More.
		extra, next = "&x.Extra", "d.More(&x.Extra, skip)"
	}
	if t.Flat != nil {
		g.P("// own%[1]s are the members %[1]s decodes itself; the rest belong to its %[2]s.", t.Name, t.Flat.Go)
		g.P("var own%s = []string{%s}", t.Name, strings.Join(jsonNames(t.Fields), ", "))
	}
	g.P(`func (x *%[1]s) decodeAt(data []byte, skip []string) (int, error) {
	var d jsonx.Decoder`, t.Name)
	loop := fmt.Sprintf("for d.Begin(data, fields%s, skip); %s; {", t.Name, next)
	if len(t.Fields) == 0 {
		g.P("%s}", loop)
	} else {
		g.P("%s\nswitch string(d.Key()) {", loop)
		for _, fd := range t.Fields {
			stmts, err := e.fieldDecode(fd)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", t.Name, fd.Go, err)
			}
			g.P("case %q:\n%s", fd.JSON, strings.Join(stmts, "\n"))
		}
		g.P("}\n}")
	}
	if !hasAbsentDefault(t) && t.Flat == nil {
		g.P("return d.End(%s, skip)\n}\n", extra)
		return nil
	}
	g.P(`if err := d.Finish(); err != nil {
	return 0, err
}`)
	if hasAbsentDefault(t) {
		g.P("d.Defaults(x.setDefault)")
	}
	if !t.NoExtra {
		g.P("d.Layout(%s, skip)", extra)
	}
	if t.Flat != nil {
		decodeFlattened(g, t)
	}
	g.P("return d.Len(), nil\n}\n")
	return nil
}

// decodeFlattened prints the end of decodeAt for an object whose members
// a flattened union shares: the union decodes every member but the
// object's own (own<T>, and those its encloser skips).
func decodeFlattened(g *printer, t *Type) {
	g.P(`uskip := own%[1]s
if len(skip) > 0 {
	uskip = jsonx.Extend(skip, own%[1]s...)
}
u, err := decode%[2]s(d.Data(), uskip)
if err != nil {
	return 0, err
}
x.%[3]s = u`, t.Name, t.Flat.Ref.Named.Name, t.Flat.Go)
	if keepsVerbatim(t) {
		// Only a whole object: with members to skip, it is a union's
		// variant or part of an enclosing object, which keep it.
		g.P(`if len(skip) == 0 {
	x.verbatim = jsonx.Snapshot(d.Data(), x.appendCanonical)
}`)
	}
}

// jsonNames are the members' JSON names as Go string literals.
func jsonNames(fields []*Field) []string {
	var out []string
	for _, f := range fields {
		out = append(out, fmt.Sprintf("%q", f.JSON))
	}
	return out
}

// appendField prints the encoder of member i, one case per member.
func (e *emitter) appendField(g *printer, t *Type) {
	g.P(`func (x *%s) appendField(b []byte, i int) ([]byte, error) {
	switch {`, t.Name)
	for _, fd := range t.Fields {
		for _, c := range e.fieldCases(fd) {
			g.P("%s", c)
		}
	}
	g.P("}\nreturn b, nil\n}\n")
}

// setDefault prints the method that sets member i of t to its schema
// default, the one place the default is spelled out: for a member that
// arrived absent (Decoder.Defaults), null or malformed, and for isDefault.
func (e *emitter) setDefault(g *printer, t *Type) {
	var cases []string
	for _, fd := range t.Fields {
		if fd.Default != nil {
			cases = append(cases, fmt.Sprintf("case %d:\n%s", fd.Bit, strings.Join(e.defaultStmts(fd), "\n")))
		}
	}
	if len(cases) == 0 {
		return
	}
	g.P(`func (x *%s) setDefault(i int) {
	switch i {
	%s
	}
}
`, t.Name, strings.Join(cases, "\n"))
}

// appendMembers prints the encoder of an object whose members a flattened
// union shares: the union's members go between the object's own and
// Extra, so the known members are appended without Extra.
func appendMembers(g *printer, t *Type) {
	members, field, isDefault := memberArgs(t, "x")
	g.P(`func (x *%[1]s) appendMembers(b []byte, tag string) ([]byte, error) {
	if jsonx.HasLayout(%[2]s) {
		return fields%[1]s.Append(b, tag, %[2]s, %[3]s, %[4]s)
	}
	b, err := fields%[1]s.Append(b, tag, jsonx.Members{}, %[3]s, nil)
	if err != nil {
		return b, err
	}
	if x.%[5]s == nil {
		return b, jsonx.EncodeError("", "%[1]s.%[5]s is nil")
	}
	if b, err = append%[6]sMembers(b, x.%[5]s); err != nil {
		return b, err
	}
	return jsonx.AppendMembers(b, %[2]s), nil
}`, t.Name, members, field, isDefault, t.Flat.Go, t.Flat.Ref.Named.Name)
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

// hasIsDefault: the object records members that arrived absent and took
// their default, so it has an isDefault method.
func hasIsDefault(t *Type) bool {
	return !t.NoExtra && hasAbsentDefault(t)
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

// marshalCall is the whole JSON object of recv, a value of the struct
// type t (neither kept verbatim nor sharing members with a union), in a
// new buffer: ([]byte, error).
func marshalCall(t *Type, recv string) string {
	members, field, isDefault := memberArgs(t, recv)
	return fmt.Sprintf("fields%s.Marshal(%s, %s, %s)", t.Name, members, field, isDefault)
}

// appendObject appends recv, a value of the struct type t, to buf as a JSON
// object: ([]byte, error). Only an object kept verbatim has an appendJSON
// method; the others wrap their members in braces here.
func appendObject(t *Type, recv, buf string) string {
	if keepsVerbatim(t) {
		return fmt.Sprintf("%s.appendJSON(%s)", recv, buf)
	}
	if t.Flat == nil {
		members, field, isDefault := memberArgs(t, recv)
		return fmt.Sprintf("fields%s.AppendObject(%s, %s, %s, %s)", t.Name, buf, members, field, isDefault)
	}
	return fmt.Sprintf("jsonx.Braces(%s)", appendMembersOf(t, recv, "append("+buf+", '{')", `""`))
}

// appendMembersOf appends the members of recv, a value of the struct type
// t, after buf (tag, a Go string literal, first when not empty): ([]byte,
// error). Only an object sharing its members with a flattened union has an
// appendMembers method; the others are appended by their descriptor's
// Append.
func appendMembersOf(t *Type, recv, buf, tag string) string {
	if t.Flat != nil {
		return fmt.Sprintf("%s.appendMembers(%s, %s)", recv, buf, tag)
	}
	members, field, isDefault := memberArgs(t, recv)
	return fmt.Sprintf("fields%s.Append(%s, %s, %s, %s, %s)", t.Name, buf, tag, members, field, isDefault)
}

// memberArgs are the arguments of Fields.Append after the tag for recv, a
// value of the struct type t: its kept members, appendField, isDefault.
func memberArgs(t *Type, recv string) (members, field, isDefault string) {
	members, field, isDefault = "jsonx.Members{}", "nil", "nil"
	if !t.NoExtra {
		members = recv + ".Extra"
	}
	if len(t.Fields) > 0 {
		field = recv + ".appendField"
	}
	if hasIsDefault(t) {
		isDefault = recv + ".isDefault"
	}
	return members, field, isDefault
}
