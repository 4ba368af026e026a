package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The resolved model: every Go name and every codec decision is made here,
// before any code is emitted. Emitters only walk these types.

// TKind is what shape a named Go type has.
type TKind int

const (
	TStruct  TKind = iota // an object: fields (+ maybe a flattened union)
	TDefined              // a union variant defined over a struct def: type V P
	TUnion                // a sealed interface
	TEnum                 // string enum: type E string + constants
	TIntEnum              // integer enum: type E int32 + constants
	TScalar               // a named primitive, list or raw value: type X string
	TNull                 // the null variant of a shape union: type X struct{}
	TRaw                  // any JSON value: type X json.RawMessage
)

// Ref is a use of a type: a named Go type, or an inline primitive, list or map.
type Ref struct {
	Named *Type
	Prim  string // "string", "bool", "int", "uint", "float", "raw", "object"
	Bits  int    // for int/uint
	List  bool
	Map   bool
	Elem  *Ref
}

// Type is one named Go type.
type Type struct {
	Name   string // Go name
	Schema string // $defs name, or "" for a synthesized type
	Doc    []string
	Kind   TKind

	Scalar *Ref // TScalar

	Values []*EnumValue // TEnum / TIntEnum
	Open   bool         // an open enum keeps unknown values

	Fields  []*Field // TStruct
	Flat    *Field   // TStruct: the field holding a flattened union
	NoExtra bool     // TStruct with Flat: unknown members belong to the variant

	Base *Type // TDefined: the struct def this variant is defined over

	Union *Union // TUnion

	// Unions this type is a variant of, and its role there.
	VariantOf []*Variant

	IsUnknown bool // the Unknown variant of a tagged union: Raw only
}

// EnumValue is one constant of an enum.
type EnumValue struct {
	Go    string
	Str   string
	Int   int64
	Doc   []string
	Title string
}

// Field is one member of an object.
type Field struct {
	JSON        string
	Go          string
	Doc         []string
	Ref         *Ref
	Required    bool
	Nullable    bool
	Ptr         bool
	Default     json.RawMessage
	OnError     bool // x-deserialize-default-on-error
	SkipInvalid bool // x-deserialize-skip-invalid-items
	OnNull      bool // x-deserialize-default-on-null
	MinLength   int
	Bit         int // index in the decoder's seen mask
}

// Union is a sealed interface's decoding plan.
type Union struct {
	Tag       string // discriminator member; "" for a union decided by JSON shape
	Variants  []*Variant
	Fallback  *Variant // the untagged branch, chosen when the tag is absent
	Unknown   *Type    // keeps unknown tags verbatim (tagged unions only)
	Flattened bool     // its members live in an enclosing object
	// FallbackTag is the untagged branch's title: a peer that writes it as
	// the tag means that branch (the Kotlin SDK does), so it picks it too.
	FallbackTag string
}

// Variant is one branch of a union.
type Variant struct {
	Union    *Type
	Type     *Type  // the Go type implementing the interface
	Tag      string // tag value (tagged unions)
	JSONKind string // shape unions: object, array, string, integer, number, boolean, null
	Keys     []string
	Ptr      bool // implemented by *Type
	Doc      []string
}

// Method is one entry of the method table.
type Method struct {
	Name         string // wire name, "session/prompt"
	Const        string // MethodSessionPrompt
	Side         string // agent, client, protocol
	Params       *Type
	Result       *Type // nil for a notification
	GoMethod     string
	Notification bool
}

// Model is everything the emitters need.
type Model struct {
	Schema  *schemaFile
	Types   []*Type // sorted by name
	byName  map[string]*Type
	defs    map[string]*Type
	Methods []*Method // sorted by wire name
}

type resolver struct {
	sf   *schemaFile
	m    *Model
	used map[string]bool // override entries used

	deferred  []func() error // checks that need every def resolved
	allFields []*Field
}

func buildModel(sf *schemaFile) (*Model, error) {
	r := &resolver{
		sf:   sf,
		m:    &Model{Schema: sf, byName: map[string]*Type{}, defs: map[string]*Type{}},
		used: map[string]bool{},
	}
	// Declare every def first so references resolve regardless of order.
	for _, name := range sf.order {
		t := &Type{Name: goName(name), Schema: name, Doc: docLines(sf.defs[name].t.Description)}
		if err := r.add(t); err != nil {
			return nil, err
		}
		r.m.defs[name] = t
	}
	for _, name := range sf.order {
		if err := r.resolveDef(name); err != nil {
			return nil, err
		}
	}
	for _, f := range r.allFields {
		f.Ptr = pointerField(f)
	}
	for _, check := range r.deferred {
		if err := check(); err != nil {
			return nil, err
		}
	}
	if err := r.methods(); err != nil {
		return nil, err
	}
	if err := r.checkOverrides(); err != nil {
		return nil, err
	}
	sort.Slice(r.m.Types, func(i, j int) bool { return r.m.Types[i].Name < r.m.Types[j].Name })
	return r.m, nil
}

func (r *resolver) add(t *Type) error {
	if prev, ok := r.m.byName[t.Name]; ok {
		return fmt.Errorf("the Go name %s is used twice (%q and %q)", t.Name, prev.Schema, t.Schema)
	}
	r.m.byName[t.Name] = t
	r.m.Types = append(r.m.Types, t)
	return nil
}

func docLines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (r *resolver) def(name string) (*Type, error) {
	t, ok := r.m.defs[name]
	if !ok {
		return nil, fmt.Errorf("$ref to unknown def %q", name)
	}
	return t, nil
}

// isAny reports a schema that accepts any JSON value ({} or only docs).
func isAny(n *node) bool {
	for _, k := range n.keys {
		switch k {
		case "description", "title", "x-deserialize-default-on-error", "x-docs-ignore":
		default:
			return false
		}
	}
	return true
}

func (r *resolver) resolveDef(name string) error {
	n := r.sf.defs[name]
	t := r.m.defs[name]
	switch {
	case isAny(n):
		t.Kind = TRaw
		return nil
	case r.isEnum(n):
		return r.enum(t, n)
	case n.t.Type.Equals([]string{"object"}) || len(n.propKeys) > 0:
		return r.object(t, n)
	case len(n.t.OneOf) > 0 || len(n.t.AnyOf) > 0:
		return r.union(t, n, nil)
	default:
		ref, null, err := r.ref(n)
		if err != nil {
			return err
		}
		if null || ref.Named != nil {
			return fmt.Errorf("%s: unsupported top-level shape", n.path)
		}
		t.Kind = TScalar
		t.Scalar = ref
		return nil
	}
}

// constOf returns the const string/int of a branch like {"type":"string","const":"x"}.
func constOf(n *node) (json.RawMessage, bool) {
	raw, ok := n.rawKids["const"]
	return raw, ok
}

func (r *resolver) isEnum(n *node) bool {
	bs := n.t.OneOf
	if len(bs) == 0 {
		bs = n.t.AnyOf
	}
	if len(bs) == 0 || len(n.propKeys) > 0 {
		return false
	}
	for _, b := range bs {
		if len(b.Properties) > 0 || b.Ref != "" || len(b.AllOf) > 0 || len(b.AnyOf) > 0 || len(b.OneOf) > 0 {
			return false
		}
		if !(b.Type.Equals([]string{"string"}) || b.Type.Equals([]string{"integer"})) {
			return false
		}
	}
	return true
}

func (r *resolver) enum(t *Type, n *node) error {
	kw := "oneOf"
	if len(n.t.OneOf) == 0 {
		kw = "anyOf"
	}
	bs, err := n.branches(kw)
	if err != nil {
		return err
	}
	intEnum := bs[0].t.Type.Equals([]string{"integer"})
	t.Kind = TEnum
	if intEnum {
		t.Kind = TIntEnum
	}
	seen := map[string]bool{}
	for _, b := range bs {
		if b.t.Type.Equals([]string{"integer"}) != intEnum {
			return fmt.Errorf("%s: enum mixes integer and string branches", n.path)
		}
		c, ok := constOf(b)
		if !ok {
			// The catch-all branch of an open enum: a plain string/integer.
			if t.Open {
				return fmt.Errorf("%s: two catch-all branches", n.path)
			}
			if intEnum && b.t.Format != "int32" {
				return fmt.Errorf("%s: integer enum catch-all must be int32", n.path)
			}
			t.Open = true
			continue
		}
		v := &EnumValue{Doc: docLines(b.t.Description), Title: b.t.Title}
		if intEnum {
			if err := json.Unmarshal(c, &v.Int); err != nil {
				return fmt.Errorf("%s: %w", b.path, err)
			}
			if b.t.Title == "" {
				return fmt.Errorf("%s: integer enum constant without a title to name it", b.path)
			}
			v.Go = t.Name + goName(b.t.Title)
		} else {
			if err := json.Unmarshal(c, &v.Str); err != nil {
				return fmt.Errorf("%s: %w", b.path, err)
			}
			v.Go = t.Name + goName(v.Str)
		}
		if seen[v.Go] {
			return fmt.Errorf("%s: enum constant %s twice", n.path, v.Go)
		}
		seen[v.Go] = true
		t.Values = append(t.Values, v)
	}
	return nil
}

// ref resolves a property/items schema to a Ref; null reports that null is
// allowed.
func (r *resolver) ref(n *node) (*Ref, bool, error) {
	t := n.t
	if t.Ref != "" {
		name, err := refName(t.Ref)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", n.path, err)
		}
		d, err := r.def(name)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", n.path, err)
		}
		return &Ref{Named: d}, false, nil
	}
	if len(t.AllOf) == 1 && len(t.Type) == 0 && len(n.propKeys) == 0 {
		c, err := n.child("allOf", "0", t.AllOf[0])
		if err != nil {
			return nil, false, err
		}
		return r.ref(c)
	}
	if len(t.AnyOf) > 0 || len(t.OneOf) > 0 {
		kw := "anyOf"
		if len(t.OneOf) > 0 {
			kw = "oneOf"
		}
		bs, err := n.branches(kw)
		if err != nil {
			return nil, false, err
		}
		var rest []*node
		null := false
		for _, b := range bs {
			if b.t.Type.Equals([]string{"null"}) && len(b.keys) == 1 {
				null = true
				continue
			}
			rest = append(rest, b)
		}
		// A union with a branch that accepts anything accepts anything
		// (JSON-RPC params/result whose type is decided by the method).
		if r.acceptsAny(rest) {
			return &Ref{Prim: "raw"}, null, nil
		}
		if len(rest) == 1 {
			ref, n2, err := r.ref(rest[0])
			return ref, null || n2, err
		}
		return nil, false, fmt.Errorf("%s: inline union not supported here", n.path)
	}
	types, null := n.types()
	if len(types) == 0 {
		if len(n.propKeys) > 0 {
			return nil, false, fmt.Errorf("%s: inline object not supported", n.path)
		}
		return &Ref{Prim: "raw"}, null, nil
	}
	if len(types) > 1 {
		return nil, false, fmt.Errorf("%s: multiple types %v", n.path, types)
	}
	switch types[0] {
	case "string":
		if f := t.Format; f != "" && f != "uri" {
			return nil, false, fmt.Errorf("%s: unsupported string format %q", n.path, f)
		}
		return &Ref{Prim: "string"}, null, nil
	case "boolean":
		return &Ref{Prim: "bool"}, null, nil
	case "number":
		if t.Format != "double" {
			return nil, false, fmt.Errorf("%s: unsupported number format %q", n.path, t.Format)
		}
		return &Ref{Prim: "float"}, null, nil
	case "integer":
		return intRef(n)
	case "array":
		if t.Items == nil {
			return nil, false, fmt.Errorf("%s: array without items", n.path)
		}
		itemsRaw := n.rawKids["items"]
		in, err := newNode(t.Items, itemsRaw, n.path+"/items")
		if err != nil {
			return nil, false, err
		}
		elem, enull, err := r.ref(in)
		if err != nil {
			return nil, false, err
		}
		if enull {
			return nil, false, fmt.Errorf("%s: nullable array items not supported", n.path)
		}
		return &Ref{List: true, Elem: elem}, null, nil
	case "object":
		if len(n.propKeys) > 0 {
			return nil, false, fmt.Errorf("%s: inline object not supported", n.path)
		}
		ap := t.AdditionalProperties
		if ap == nil || isEmptySchema(n.rawKids["additionalProperties"]) {
			return &Ref{Prim: "object"}, null, nil
		}
		an, err := newNode(ap, n.rawKids["additionalProperties"], n.path+"/additionalProperties")
		if err != nil {
			return nil, false, err
		}
		elem, enull, err := r.ref(an)
		if err != nil {
			return nil, false, err
		}
		if enull {
			return nil, false, fmt.Errorf("%s: nullable map values not supported", n.path)
		}
		return &Ref{Map: true, Elem: elem}, null, nil
	}
	return nil, false, fmt.Errorf("%s: unsupported type %q", n.path, types[0])
}

func isEmptySchema(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "true" || s == "{}"
}

func intRef(n *node) (*Ref, bool, error) {
	_, null := n.types()
	t := n.t
	var ref *Ref
	switch t.Format {
	case "int32":
		ref = &Ref{Prim: "int", Bits: 32}
	case "int64":
		ref = &Ref{Prim: "int", Bits: 64}
	case "uint16":
		ref = &Ref{Prim: "uint", Bits: 16}
	case "uint32":
		ref = &Ref{Prim: "uint", Bits: 32}
	case "uint64":
		ref = &Ref{Prim: "uint", Bits: 64}
	default:
		return nil, false, fmt.Errorf("%s: unsupported integer format %q", n.path, t.Format)
	}
	// minimum/maximum must be what the Go type already enforces.
	if t.Minimum != nil && !(ref.Prim == "uint" && *t.Minimum == 0) {
		return nil, false, fmt.Errorf("%s: minimum %v not implied by format %s", n.path, *t.Minimum, t.Format)
	}
	if t.Maximum != nil && !(ref.Prim == "uint" && ref.Bits == 16 && *t.Maximum == 65535) {
		return nil, false, fmt.Errorf("%s: maximum %v not implied by format %s", n.path, *t.Maximum, t.Format)
	}
	return ref, null, nil
}

// acceptsAny reports whether one of the branches (through refs) is the
// any-schema.
func (r *resolver) acceptsAny(bs []*node) bool {
	for _, b := range bs {
		if isAny(b) {
			return true
		}
		if b.t.Ref != "" {
			if name, err := refName(b.t.Ref); err == nil && isAny(r.sf.defs[name]) {
				return true
			}
		}
		if len(b.t.AllOf) == 1 && len(b.t.AllOf[0].Ref) > 0 {
			if name, err := refName(b.t.AllOf[0].Ref); err == nil && isAny(r.sf.defs[name]) {
				return true
			}
		}
		if len(b.t.AnyOf) > 0 {
			sub, err := b.branches("anyOf")
			if err == nil && r.acceptsAny(sub) {
				return true
			}
		}
	}
	return false
}

// object resolves a struct def, including a flattened union when the
// object also has oneOf/anyOf.
func (r *resolver) object(t *Type, n *node) error {
	t.Kind = TStruct
	if n.has("not") || n.has("unevaluatedProperties") {
		return fmt.Errorf("%s: unsupported object keywords", n.path)
	}
	// Unknown members are always kept (SDK-5), which is additionalProperties:
	// true; anything stricter is a construct this generator does not handle.
	if ap, ok := n.rawKids["additionalProperties"]; ok && !isEmptySchema(ap) {
		return fmt.Errorf("%s: additionalProperties other than true is not supported", n.path)
	}
	fields, err := r.fields(n, t.Name, "")
	if err != nil {
		return err
	}
	t.Fields = fields
	if len(n.t.OneOf) == 0 && len(n.t.AnyOf) == 0 {
		return nil
	}
	// A flattened union: the variants' members sit beside the object's own.
	u := &Type{Kind: TUnion}
	if err := r.union(u, n, t); err != nil {
		return err
	}
	fname := goName(u.Union.Tag)
	if u.Union.Tag == "" {
		fname = u.Name[len(commonWordPrefix(variantPayloadNames(u))):]
	}
	for _, f := range fields {
		if f.Go == fname {
			return fmt.Errorf("%s: flattened union field %s collides with a property", n.path, fname)
		}
	}
	t.Flat = &Field{Go: fname, Ref: &Ref{Named: u}, Required: true, Doc: []string{
		"The members that depend on the variant; they sit beside the other members in JSON.",
	}}
	t.NoExtra = true
	return nil
}

func variantPayloadNames(u *Type) []string {
	var out []string
	for _, v := range u.Union.Variants {
		if v.Type.Base != nil {
			out = append(out, v.Type.Base.Name)
		} else {
			out = append(out, v.Type.Name)
		}
	}
	return out
}

func (r *resolver) fields(n *node, owner string, exclude string) ([]*Field, error) {
	req := map[string]bool{}
	for _, k := range n.t.Required {
		req[k] = true
	}
	delete(req, exclude)
	var out []*Field
	seenGo := map[string]bool{"Extra": true}
	for _, k := range n.propKeys {
		if k == exclude {
			continue
		}
		p, err := n.prop(k)
		if err != nil {
			return nil, err
		}
		f, err := r.field(p, k, req[k])
		if err != nil {
			return nil, err
		}
		if seenGo[f.Go] {
			return nil, fmt.Errorf("%s: Go field name %s.%s used twice", n.path, owner, f.Go)
		}
		seenGo[f.Go] = true
		f.Bit = len(out)
		out = append(out, f)
		delete(req, k)
	}
	if len(out) > 64 {
		return nil, fmt.Errorf("%s: more than 64 properties", n.path)
	}
	// A required name with no property schema (AvailableCommand's
	// "description" in this schema) is still enforced: as a required member
	// of any JSON type, kept verbatim.
	var missing []string
	for k := range req {
		missing = append(missing, k)
	}
	sort.Strings(missing)
	for _, k := range missing {
		f := &Field{JSON: k, Go: goName(k), Ref: &Ref{Prim: "raw"}, Required: true, Bit: len(out),
			Doc: []string{"Required by the schema without a property schema: any JSON value, kept verbatim."}}
		if seenGo[f.Go] {
			return nil, fmt.Errorf("%s: Go field name %s.%s used twice", n.path, owner, f.Go)
		}
		seenGo[f.Go] = true
		out = append(out, f)
	}
	return out, nil
}

func (r *resolver) field(p *node, key string, required bool) (*Field, error) {
	ref, null, err := r.ref(p)
	if err != nil {
		return nil, err
	}
	f := &Field{
		JSON:        key,
		Go:          goName(key),
		Doc:         docLines(p.t.Description),
		Ref:         ref,
		Required:    required,
		Nullable:    null,
		OnError:     p.flag("x-deserialize-default-on-error"),
		SkipInvalid: p.flag("x-deserialize-skip-invalid-items"),
		OnNull:      p.flag("x-deserialize-default-on-null"),
		MinLength:   p.t.MinLength,
	}
	if key == "_meta" {
		f.Go = "Meta"
	}
	if d, ok := p.rawKids["default"]; ok {
		f.Default = d
		path := p.path + "/default"
		// Checked once every def is resolved: the default may name a def
		// that comes later in the schema.
		r.deferred = append(r.deferred, func() error { return r.checkLiteral(ref, d, path) })
	}
	if f.SkipInvalid && !ref.List {
		return nil, fmt.Errorf("%s: x-deserialize-skip-invalid-items on a non-array", p.path)
	}
	if f.OnNull && !(ref.List || ref.Map) {
		return nil, fmt.Errorf("%s: x-deserialize-default-on-null on a non-collection", p.path)
	}
	if f.MinLength > 0 && ref.Prim != "string" {
		return nil, fmt.Errorf("%s: minLength on a non-string", p.path)
	}
	r.allFields = append(r.allFields, f)
	return f, nil
}

// pointerField is the optional-field rule (documented in gen's package doc):
// a field is a pointer when it may be absent, has no schema default, and its
// Go type has a meaningful zero value (scalar, enum, struct). Lists, maps,
// raw JSON and unions are never pointers: nil already means absent.
func pointerField(f *Field) bool {
	if f.Required && !f.Nullable {
		return false
	}
	if f.Default != nil {
		return false
	}
	ref := f.Ref
	if ref.List || ref.Map {
		return false
	}
	if ref.Named != nil {
		switch ref.Named.Kind {
		case TUnion, TRaw:
			return false
		}
		return true
	}
	switch ref.Prim {
	case "raw", "object":
		return false
	}
	return true
}

// checkLiteral verifies at generation time that a schema default decodes
// into its field's type, so applying it at run time cannot fail.
func (r *resolver) checkLiteral(ref *Ref, raw json.RawMessage, path string) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return r.checkValue(ref, v, path)
}

func (r *resolver) checkValue(ref *Ref, v any, path string) error {
	bad := func() error { return fmt.Errorf("%s: default %v does not fit its type", path, v) }
	switch {
	case ref.List:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for _, e := range l {
			if err := r.checkValue(ref.Elem, e, path+"[]"); err != nil {
				return err
			}
		}
		return nil
	case ref.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for k, e := range m {
			if err := r.checkValue(ref.Elem, e, path+"/"+k); err != nil {
				return err
			}
		}
		return nil
	case ref.Named != nil:
		t := ref.Named
		switch t.Kind {
		case TEnum:
			s, ok := v.(string)
			if !ok {
				return bad()
			}
			if t.Open {
				return nil
			}
			for _, ev := range t.Values {
				if ev.Str == s {
					return nil
				}
			}
			return bad()
		case TScalar:
			return r.checkValue(t.Scalar, v, path)
		case TStruct:
			if t.Flat != nil {
				return fmt.Errorf("%s: defaults for objects with variants are not supported", path)
			}
			m, ok := v.(map[string]any)
			if !ok {
				return bad()
			}
			for k, e := range m {
				var f *Field
				for _, ff := range t.Fields {
					if ff.JSON == k {
						f = ff
					}
				}
				if f == nil {
					return fmt.Errorf("%s: default member %q is not a property of %s", path, k, t.Name)
				}
				if err := r.checkValue(f.Ref, e, path+"/"+k); err != nil {
					return err
				}
			}
			for _, f := range t.Fields {
				if _, ok := m[f.JSON]; f.Required && !ok {
					return fmt.Errorf("%s: default lacks required member %q", path, f.JSON)
				}
			}
			return nil
		case TRaw:
			return nil
		}
		return fmt.Errorf("%s: defaults of kind %v not supported", path, t.Kind)
	}
	switch ref.Prim {
	case "string":
		if _, ok := v.(string); ok {
			return nil
		}
	case "bool":
		if _, ok := v.(bool); ok {
			return nil
		}
	case "int", "uint", "float":
		if _, ok := v.(json.Number); ok {
			return nil
		}
	case "raw":
		return nil
	case "object":
		if _, ok := v.(map[string]any); ok {
			return nil
		}
	}
	return bad()
}
