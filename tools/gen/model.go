package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
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
	TAlias                // a def that only references another: type X = Y
)

// Ref is a use of a type: a named Go type, or an inline primitive, list or map.
type Ref struct {
	Named *Type
	Prim  string // "string", "bool", "int", "uint", "float", "raw", "object"
	Bits  int    // for int/uint
	List  bool
	Map   bool
	Elem  *Ref
	// MinItems is a list's minItems, enforced on decode (ErrInvalidValue).
	MinItems int
	// Min is an integer's minimum when its Go type does not imply it,
	// enforced on decode (ErrInvalidValue); nil otherwise.
	Min *int64
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

	Alias *Type // TAlias: the def it stands for (never itself an alias)

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
	// NullTagFallback: the untagged branch declares the tag as null (the
	// branch for "no tag").
	NullTagFallback bool
	// LenientTag: the owner of a flattened union declares the tag with
	// x-deserialize-default-on-error, so a tag that is not a string (null,
	// malformed) selects the untagged branch, which keeps it verbatim.
	LenientTag bool
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
	Shared       bool // another side has a method of the same wire name
}

// HandlerName is the optional handler interface of a method.
func (m *Method) HandlerName() string { return m.GoMethod + "Handler" }

// SharedNames reports whether some wire name has methods on two sides.
func (m *Model) SharedNames() bool {
	for _, me := range m.Methods {
		if me.Shared {
			return true
		}
	}
	return false
}

// Model is everything the emitters need.
type Model struct {
	Schema  *schemaFile
	Surface *Surface
	Types   []*Type // sorted by name
	byName  map[string]*Type
	defs    map[string]*Type
	Methods []*Method // sorted by wire name

	usedOverrides map[string]bool // the override entries this schema used
}

type resolver struct {
	sf   *schemaFile
	m    *Model
	used map[string]bool // override entries used

	deferred  []func() error // checks that need every def resolved
	allFields []*Field

	// flattenedDefs are the union defs that are a tagged variant's payload:
	// they are decoded from, and encoded into, the variant's object.
	flattenedDefs map[string]bool
}

func buildModel(sf *schemaFile) (*Model, error) {
	r := &resolver{
		sf:   sf,
		m:    &Model{Schema: sf, Surface: sf.surf, byName: map[string]*Type{}, defs: map[string]*Type{}},
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
	if err := r.aliases(); err != nil {
		return nil, err
	}
	if err := r.findFlattenedDefs(); err != nil {
		return nil, err
	}
	for _, name := range sf.order {
		if r.m.defs[name].Kind == TAlias {
			continue
		}
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
	r.m.usedOverrides = r.used
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
	if t.Kind == TAlias {
		return t.Alias, nil
	}
	return t, nil
}

// findFlattenedDefs finds the union defs that are the payload (allOf of
// one $ref) of a tagged union's branch: they are flattened into that
// variant, and a member elsewhere of such a type is a whole object of it.
func (r *resolver) findFlattenedDefs() error {
	r.flattenedDefs = map[string]bool{}
	for _, name := range r.sf.order {
		n := r.sf.defs[name]
		for _, b := range append(append([]*schemas.Type{}, n.t.OneOf...), n.t.AnyOf...) {
			if len(b.AllOf) != 1 || b.AllOf[0].Ref == "" || len(b.Properties) == 0 {
				continue // not a tagged branch over a def
			}
			target, err := refName(b.AllOf[0].Ref)
			if err != nil {
				continue
			}
			d := r.sf.defs[target]
			if d == nil || len(d.propKeys) > 0 || (len(d.t.OneOf) == 0 && len(d.t.AnyOf) == 0) || r.isEnum(d) || aliasTarget(d) != "" {
				continue
			}
			r.flattenedDefs[target] = true
		}
	}
	return nil
}

// aliasTarget returns the def a def only references (its keywords are
// allOf with one $ref plus documentation and method annotations), or "".
func aliasTarget(n *node) string {
	if len(n.t.AllOf) != 1 || n.t.AllOf[0].Ref == "" {
		return ""
	}
	for _, k := range n.keys {
		switch k {
		case "allOf", "description", "title", "x-side", "x-method", "x-docs-ignore":
		default:
			return ""
		}
	}
	name, err := refName(n.t.AllOf[0].Ref)
	if err != nil {
		return ""
	}
	return name
}

// aliases resolves every def that only references another into a Go type
// alias of it, following chains (and failing on a cycle).
func (r *resolver) aliases() error {
	for _, name := range r.sf.order {
		target := aliasTarget(r.sf.defs[name])
		if target == "" {
			continue
		}
		seen := map[string]bool{name: true}
		for next := aliasTarget(r.sf.defs[target]); next != ""; next = aliasTarget(r.sf.defs[target]) {
			if seen[target] {
				return fmt.Errorf("%s: alias cycle through %s", r.sf.defs[name].path, target)
			}
			seen[target] = true
			target = next
		}
		to, ok := r.m.defs[target]
		if !ok {
			return fmt.Errorf("%s: $ref to unknown def %q", r.sf.defs[name].path, target)
		}
		t := r.m.defs[name]
		t.Kind, t.Alias = TAlias, to
	}
	return nil
}

// isAny reports a schema that accepts any JSON value ({} or only docs).
func isAny(n *node) bool {
	for _, k := range n.keys {
		switch k {
		case "description", "title", "x-deserialize-default-on-error", "x-docs-ignore", "x-side", "x-method":
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
		// As for a member: a union with a branch that accepts anything
		// accepts anything (v2's ErrorData: two known shapes or "Other").
		bs, err := n.unionBranches()
		if err != nil {
			return err
		}
		if r.acceptsAny(bs) {
			t.Kind = TRaw
			return nil
		}
		if err := r.union(t, n, nil); err != nil {
			return err
		}
		t.Union.Flattened = r.flattenedDefs[name]
		return nil
	default:
		ref, null, err := r.ref(n)
		if err != nil {
			return err
		}
		if null || ref.Named != nil {
			return fmt.Errorf("%s: unsupported top-level shape", n.path)
		}
		if err := checkedOnlyAsMember(ref, n.path); err != nil {
			return err
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
	// An enum names at least one value; plain branches without any const
	// (v2's RequestId: integer or string) are a union decided by shape.
	consts := false
	for _, b := range bs {
		consts = consts || b.Const != nil
	}
	if !consts {
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
	bs, err := n.unionBranches()
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
		bs, err := n.unionBranches()
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
		// A union of method payloads (an envelope's params or result) is
		// decided by the envelope's method member, not by the value: raw.
		if len(rest) > 1 || (len(rest) == 1 && (len(rest[0].t.AnyOf) > 0 || len(rest[0].t.OneOf) > 0)) {
			if ok, err := r.methodPayloads(rest); err != nil || ok {
				return &Ref{Prim: "raw"}, null, err
			}
		}
		if len(rest) == 1 {
			ref, n2, err := r.ref(rest[0])
			return ref, null || n2, err
		}
		// Only defs name Go union types: an inline union of plain JSON
		// kinds (v2's error response id: integer, string or null) is raw.
		if plainKinds(rest) {
			return &Ref{Prim: "raw"}, null, nil
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
	if n.has("minItems") && types[0] != "array" {
		return nil, false, fmt.Errorf("%s: minItems on a non-array", n.path)
	}
	if n.has("contentEncoding") && types[0] != "string" {
		return nil, false, fmt.Errorf("%s: contentEncoding on a non-string", n.path)
	}
	switch types[0] {
	case "string":
		// Formats and encodings that Go keeps as text are strings, not
		// validated on decode; any other stops generation.
		if f := t.Format; f != "" && !textFormats[f] {
			return nil, false, fmt.Errorf("%s: unsupported string format %q", n.path, f)
		}
		if enc, ok := n.rawKids["contentEncoding"]; ok && string(bytes.TrimSpace(enc)) != `"base64"` {
			return nil, false, fmt.Errorf("%s: unsupported contentEncoding %s", n.path, enc)
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
		if err := checkedOnlyAsMember(elem, in.path); err != nil {
			return nil, false, err
		}
		return &Ref{List: true, Elem: elem, MinItems: n.minItems()}, null, nil
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
		if err := checkedOnlyAsMember(elem, an.path); err != nil {
			return nil, false, err
		}
		return &Ref{Map: true, Elem: elem}, null, nil
	}
	return nil, false, fmt.Errorf("%s: unsupported type %q", n.path, types[0])
}

// textFormats are the string formats kept as plain Go strings: the value
// is text to the peers that use it (a URI, an RFC 3339 time, a pattern).
var textFormats = map[string]bool{"uri": true, "date-time": true, "regex": true}

// checkedOnlyAsMember fails for a minimum or minItems where the codec does
// not check it: they are enforced on object members (and minItems on the
// array branches of a shape union) only.
func checkedOnlyAsMember(ref *Ref, path string) error {
	if ref.Min != nil || ref.MinItems > 0 {
		return fmt.Errorf("%s: minimum/minItems are only supported on object members", path)
	}
	return nil
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
	// maximum must be what the Go type already enforces; a minimum it does
	// not imply (v2's line numbers, from 1) is checked on decode.
	if t.Minimum != nil && !(ref.Prim == "uint" && *t.Minimum == 0) {
		m := int64(*t.Minimum)
		if float64(m) != *t.Minimum || (ref.Prim == "uint" && m < 0) {
			return nil, false, fmt.Errorf("%s: minimum %v is not an integer the format %s can hold", n.path, *t.Minimum, t.Format)
		}
		ref.Min = &m
	}
	if t.Maximum != nil && !(ref.Prim == "uint" && ref.Bits == 16 && *t.Maximum == 65535) {
		return nil, false, fmt.Errorf("%s: maximum %v not implied by format %s", n.path, *t.Maximum, t.Format)
	}
	return ref, null, nil
}

// plainKinds reports branches that are each one primitive JSON type
// (string, integer, number, boolean) with no structure of their own.
func plainKinds(bs []*node) bool {
	for _, b := range bs {
		types, null := b.types()
		if null || len(types) != 1 || b.t.Ref != "" || len(b.propKeys) > 0 || len(b.t.AllOf)+len(b.t.AnyOf)+len(b.t.OneOf) > 0 || b.has("const") {
			return false
		}
		switch types[0] {
		case "string", "integer", "number", "boolean":
		default:
			return false
		}
	}
	return true
}

// methodPayloads reports whether every leaf of the branches (through
// nested anyOf/oneOf and single-$ref allOf) is a def with x-method.
func (r *resolver) methodPayloads(bs []*node) (bool, error) {
	for _, b := range bs {
		switch {
		case len(b.t.AnyOf) > 0 || len(b.t.OneOf) > 0:
			sub, err := b.unionBranches()
			if err != nil {
				return false, err
			}
			if ok, err := r.methodPayloads(sub); err != nil || !ok {
				return false, err
			}
		case len(b.t.AllOf) == 1 && b.t.AllOf[0].Ref != "" && len(b.propKeys) == 0:
			name, err := refName(b.t.AllOf[0].Ref)
			if err != nil {
				return false, err
			}
			if d := r.sf.defs[name]; d == nil || d.str("x-method") == "" {
				return false, nil
			}
		default:
			return false, nil
		}
	}
	return true, nil
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
	flat := len(n.t.OneOf) > 0 || len(n.t.AnyOf) > 0
	// The property a flattened tagged union discriminates on belongs to the
	// union, not to the object, even when the object declares it too.
	tagProp, err := r.flatTagProperty(n, flat)
	if err != nil {
		return err
	}
	exclude := ""
	if tagProp != nil {
		exclude = tagProp.key
	}
	fields, err := r.fields(n, t.Name, exclude)
	if err != nil {
		return err
	}
	t.Fields = fields
	if !flat {
		return nil
	}
	// A flattened union: the variants' members sit beside the object's own.
	u := &Type{Kind: TUnion}
	if err := r.union(u, n, t); err != nil {
		return err
	}
	if err := tagProp.apply(u.Union, n.path); err != nil {
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

// flatTag is an object's own declaration of its flattened union's tag.
type flatTag struct {
	key     string
	lenient bool // x-deserialize-default-on-error
}

// flatTagProperty finds the property of n that is also the tag of its
// flattened union, and checks it is a string (or null) schema.
func (r *resolver) flatTagProperty(n *node, flat bool) (*flatTag, error) {
	if !flat {
		return nil, nil
	}
	bs, err := n.unionBranches()
	if err != nil {
		return nil, err
	}
	tag, err := unionTag(n, bs)
	if err != nil || tag == "" || n.t.Properties[tag] == nil {
		return nil, err
	}
	p, err := n.prop(tag)
	if err != nil {
		return nil, err
	}
	ref, _, err := r.ref(p)
	if err != nil {
		return nil, err
	}
	if ref.Prim != "string" || p.has("default") {
		return nil, fmt.Errorf("%s: a flattened union's tag declared by its object must be a string without a default", p.path)
	}
	return &flatTag{key: tag, lenient: p.flag("x-deserialize-default-on-error")}, nil
}

// apply records the tag's leniency on the union: it needs the untagged
// branch that declares the tag as null, which is what a lenient tag selects.
func (ft *flatTag) apply(u *Union, path string) error {
	if ft == nil || !ft.lenient {
		if u.NullTagFallback {
			return fmt.Errorf("%s: a branch with a null tag needs the tag declared with x-deserialize-default-on-error", path)
		}
		return nil
	}
	if !u.NullTagFallback {
		return fmt.Errorf("%s: a lenient tag needs an untagged branch that declares the tag as null", path)
	}
	u.LenientTag = true
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
