package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// The resolver turns a loaded schema (schemaFile, load.go) into the Model
// (model.go): buildModel declares every def, then decides each one's Go
// shape here (objects, enums, aliases), in resolve_ref.go (what Go type a
// member or item schema is), resolve_union.go (unions and their variants)
// and resolve_methods.go (the method table); resolve_defaults.go checks
// schema defaults against the types they land in. Every schema construct it
// does not handle stops generation with the construct's schema path.

// resolver holds the state of one buildModel.
type resolver struct {
	sf   *schemaFile
	m    *Model
	used map[string]bool // override entries used

	deferred  []func() error // checks that need every def resolved
	allFields []*Field

	// flattenedDefs are the union defs that are a tagged variant's payload:
	// they are decoded from, and encoded into, the variant's object.
	flattenedDefs map[string]bool

	patterns []*Pattern      // every string pattern resolved
	consumed map[string]bool // "path keyword" of each consumedKeywords keyword a rule took
}

// buildModel resolves sf into its Model: every def gets its Go type, every
// checked rule runs, the method table is built.
func buildModel(sf *schemaFile) (*Model, error) {
	r := &resolver{
		sf:       sf,
		m:        &Model{Schema: sf, Surface: sf.surf, byName: map[string]*Type{}, defs: map[string]*Type{}},
		used:     map[string]bool{},
		consumed: map[string]bool{},
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
	if err := r.checkConsumed(); err != nil {
		return nil, err
	}
	if err := r.namePatterns(); err != nil {
		return nil, err
	}
	return r.m, nil
}

// add declares the Go type t, failing when its name is taken.
func (r *resolver) add(t *Type) error {
	if prev, ok := r.m.byName[t.Name]; ok {
		return fmt.Errorf("the Go name %s is used twice (%q and %q)", t.Name, prev.Schema, t.Schema)
	}
	r.m.byName[t.Name] = t
	r.m.Types = append(r.m.Types, t)
	return nil
}

// docLines splits a schema description into doc comment lines.
func docLines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// def is the Go type of the def name (what an alias stands for).
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

// resolveDef decides the Go shape of the def name: any JSON value, an
// enum, an object, a union or a named scalar.
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

// isEnum reports a oneOf/anyOf of string or integer consts (with at most
// a plain catch-all branch): an enum rather than a union.
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

// enum resolves an enum def: its constants, and whether it is open (has
// a catch-all branch that keeps unknown values).
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
	if ref.Prim != "string" || ref.Pattern != nil || p.has("default") {
		return nil, fmt.Errorf("%s: a flattened union's tag declared by its object must be a string without a default or pattern", p.path)
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

// fields resolves the properties of n (but exclude, a flattened union's
// tag) into the members of the Go type owner, in schema order.
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

// field resolves the property key (schema p) into a member, with its
// leniency keywords and bounds.
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
