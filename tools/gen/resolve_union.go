package main

import (
	"fmt"
	"sort"
	"strings"
)

// branchInfo is one oneOf/anyOf branch, classified.
type branchInfo struct {
	n        *node
	tagValue string // tagged branch
	catchAll bool   // the "other" branch of a tagged union: unknown tags
	payload  *Type  // allOf [$ref]
	inline   bool   // has properties of its own (besides the tag)
	nullTag  bool   // the tag's schema is {"type":"null"}: the branch for no tag
	title    string
}

// union resolves oneOf/anyOf into a sealed interface. owner is the object
// whose members the union shares (a flattened union), or nil.
func (r *resolver) union(t *Type, n *node, owner *Type) error {
	bs, err := n.unionBranches()
	if err != nil {
		return err
	}
	tag, err := unionTag(n, bs)
	if err != nil {
		return err
	}
	t.Kind = TUnion
	u := &Union{Tag: tag, Flattened: owner != nil}
	t.Union = u

	infos := make([]*branchInfo, len(bs))
	for i, b := range bs {
		bi := &branchInfo{n: b, title: b.t.Title}
		if len(b.t.AllOf) == 1 && b.t.AllOf[0].Ref != "" {
			name, err := refName(b.t.AllOf[0].Ref)
			if err != nil {
				return fmt.Errorf("%s: %w", b.path, err)
			}
			if bi.payload, err = r.def(name); err != nil {
				return fmt.Errorf("%s: %w", b.path, err)
			}
		} else if len(b.t.AllOf) > 0 {
			return fmt.Errorf("%s: allOf must be a single $ref", b.path)
		}
		for _, k := range b.propKeys {
			p, err := b.prop(k)
			if err != nil {
				return err
			}
			if tag != "" && k == tag {
				if c, ok := constOf(p); ok {
					bi.tagValue = strings.Trim(string(c), `"`)
				} else if b.has("not") && bi.title == "other" {
					bi.catchAll = true
				} else if isNullOnly(p) {
					// The branch for "no tag" (v1 unstable's IdleStateUpdate
					// "none": stopReason omitted or null): an untagged branch.
					bi.nullTag = true
				} else {
					return fmt.Errorf("%s: tag %q without const", b.path, tag)
				}
				continue
			}
			bi.inline = true
		}
		if (b.has("not") || b.has("unevaluatedProperties")) && !bi.catchAll {
			return fmt.Errorf("%s: not/unevaluatedProperties outside a catch-all branch", b.path)
		}
		if bi.inline && bi.payload != nil {
			return fmt.Errorf("%s: a branch with both a $ref and its own properties", b.path)
		}
		infos[i] = bi
	}

	// Name the union: a def keeps its name; a flattened tagged union is
	// Owner+Tag; a flattened untagged one is named after what its variants
	// share (ElicitationSessionScope, ElicitationRequestScope → ElicitationScope).
	if owner != nil {
		if tag != "" {
			t.Name = owner.Name + goName(tag)
		} else {
			var names []string
			for _, bi := range infos {
				if bi.payload == nil {
					return fmt.Errorf("%s: untagged flattened union branches must be $refs", n.path)
				}
				names = append(names, bi.payload.Name)
			}
			pre, suf := commonWordPrefix(names), commonWordSuffix(names)
			if suf == "" {
				return fmt.Errorf("%s: cannot name the flattened union (no common suffix)", n.path)
			}
			t.Name = pre + suf
			if prev, ok := r.m.byName[t.Name]; ok {
				// The same anonymous union inlined in several objects
				// (the elicitation scope): share one Go type.
				if prev.Kind != TUnion || strings.Join(variantPayloadNames(prev), ",") != strings.Join(names, ",") {
					return fmt.Errorf("%s: union name %s collides", n.path, t.Name)
				}
				*t = *prev
				return nil
			}
		}
		if err := r.add(t); err != nil {
			return err
		}
	}

	if tag != "" {
		if err := r.taggedVariants(t, infos); err != nil {
			return err
		}
		if owner == nil && u.NullTagFallback {
			return fmt.Errorf("%s: a branch with a null tag outside a flattened union", n.path)
		}
		return nil
	}
	return r.shapeVariants(t, infos)
}

// isNullOnly reports a schema that is exactly {"type":"null"}.
func isNullOnly(n *node) bool {
	return len(n.keys) == 1 && n.t.Type.Equals([]string{"null"})
}

// unionTag finds the discriminator: the one property that is a required
// string const in tagged branches. The discriminator keyword, when present,
// must agree.
func unionTag(n *node, bs []*node) (string, error) {
	tag := ""
	for _, b := range bs {
		req := map[string]bool{}
		for _, k := range b.t.Required {
			req[k] = true
		}
		for _, k := range b.propKeys {
			p := b.t.Properties[k]
			if p.Const == nil || !req[k] {
				continue
			}
			if tag != "" && tag != k {
				return "", fmt.Errorf("%s: branches disagree on the tag (%q, %q)", n.path, tag, k)
			}
			tag = k
		}
	}
	if d := n.discriminator(); d != "" && d != tag {
		return "", fmt.Errorf("%s: discriminator %q but const tag %q", n.path, d, tag)
	}
	return tag, nil
}

func (r *resolver) taggedVariants(t *Type, infos []*branchInfo) error {
	u := t.Union
	seen := map[string]bool{}
	catchAllTitle := ""
	for _, bi := range infos {
		switch {
		case bi.catchAll:
			catchAllTitle = bi.title
			continue // the Unknown variant below keeps these
		case bi.tagValue == "":
			if u.Fallback != nil {
				return fmt.Errorf("%s: two untagged branches", bi.n.path)
			}
			if bi.title == "" {
				return fmt.Errorf("%s: untagged branch without a title to name it", bi.n.path)
			}
		}
		label := bi.tagValue
		if label == "" {
			label = bi.title
		}
		if seen[label] {
			return fmt.Errorf("%s: tag %q twice", bi.n.path, label)
		}
		seen[label] = true
		vt, err := r.variantType(t, label, bi)
		if err != nil {
			return err
		}
		path := bi.n.path
		r.deferred = append(r.deferred, func() error {
			for _, f := range structFields(vt) {
				if f.JSON == u.Tag {
					return fmt.Errorf("%s: variant %s has a member named like the tag", path, vt.Name)
				}
			}
			return nil
		})
		v := &Variant{Union: t, Type: vt, Tag: bi.tagValue, Ptr: true, Doc: docLines(bi.n.t.Description)}
		vt.VariantOf = append(vt.VariantOf, v)
		u.Variants = append(u.Variants, v)
		if bi.tagValue == "" {
			u.Fallback, u.FallbackTag = v, bi.title
			u.NullTagFallback = bi.nullTag
		}
	}
	unk := &Type{Name: t.Name + "Unknown", Kind: TStruct, IsUnknown: true}
	if _, taken := r.m.byName[unk.Name]; taken && catchAllTitle != "" {
		// A known tag spells "unknown" (v1 unstable's StateUpdate): the
		// catch-all is named after its branch's title instead.
		unk.Name = t.Name + goName(catchAllTitle)
	}
	unk.Doc = []string{
		"A variant this schema does not know (a newer peer's tag). Raw keeps",
		"the whole object verbatim, so it re-encodes byte for byte.",
	}
	if err := r.add(unk); err != nil {
		return err
	}
	u.Unknown = unk
	uv := &Variant{Union: t, Type: unk, Ptr: true}
	unk.VariantOf = append(unk.VariantOf, uv)
	return nil
}

// structFields returns the fields of a struct or of the struct a defined
// variant is based on.
func structFields(t *Type) []*Field {
	if t.Kind == TDefined {
		return t.Base.Fields
	}
	return t.Fields
}

// variantType decides the Go type of a branch:
//   - a $ref branch whose variant name is the def's own name (McpServerHTTP,
//     AuthMethodAgent, TextResourceContents) is the def itself;
//   - another $ref branch is a defined type over the def
//     (type ContentBlockText TextContent), so each variant is distinct;
//   - an inline branch is a struct of its own properties.
func (r *resolver) variantType(u *Type, label string, bi *branchInfo) (*Type, error) {
	name := u.Name + goName(label)
	if bi.payload != nil && r.flattenedDefs[bi.payload.Schema] {
		// The payload is a tagged union def (v2's SessionUpdate
		// "state_update" over StateUpdate): the variant is an object
		// holding it flattened, its members beside the outer tag.
		if bi.inline {
			return nil, fmt.Errorf("%s: a union payload with properties of its own", bi.n.path)
		}
		inner := bi.payload
		vt := &Type{Name: name, Kind: TStruct, Doc: docLines(bi.n.t.Description), NoExtra: true}
		r.deferred = append(r.deferred, func() error {
			if inner.Union.Tag == "" {
				return fmt.Errorf("%s: a variant's union payload %s must be tagged", bi.n.path, inner.Schema)
			}
			vt.Flat = &Field{Go: goName(inner.Union.Tag), Ref: &Ref{Named: inner}, Required: true, Doc: []string{
				fmt.Sprintf("The %s the variant carries; its members sit beside the tag in JSON.", inner.Name),
			}}
			return nil
		})
		return vt, r.add(vt)
	}
	if bi.payload != nil {
		if name == bi.payload.Name || bi.title == bi.payload.Schema {
			// The def is the variant. Its JSON methods then speak the
			// union's form (with the tag), which is only right when the def
			// is used nowhere else.
			if n := r.sf.refs[bi.payload.Schema]; n != 1 {
				return nil, fmt.Errorf("%s: def %s would be variant %s but is referenced %d times", bi.n.path, bi.payload.Schema, name, n)
			}
			r.variantPayloadIsObject(bi.n.path, name, bi.payload)
			return bi.payload, nil
		}
		vt := &Type{Name: name, Kind: TDefined, Base: bi.payload, Doc: docLines(bi.n.t.Description)}
		r.variantPayloadIsObject(bi.n.path, name, bi.payload)
		return vt, r.add(vt)
	}
	vt := &Type{Name: name, Kind: TStruct, Doc: docLines(bi.n.t.Description)}
	fields, err := r.fields(bi.n, name, u.Union.Tag)
	if err != nil {
		return nil, err
	}
	vt.Fields = fields
	return vt, r.add(vt)
}

// variantPayloadIsObject fails generation, once every def is resolved,
// when a variant's payload def is not an object: v2's SessionUpdate
// "state_update" is the StateUpdate union, and a union nested in a variant
// has no codec.
func (r *resolver) variantPayloadIsObject(path, name string, payload *Type) {
	r.deferred = append(r.deferred, func() error {
		if payload.Kind != TStruct {
			return fmt.Errorf("%s: variant %s is a %s def (%s); only object defs can be variants", path, name, kindName(payload.Kind), payload.Schema)
		}
		return nil
	})
}

// kindName names a TKind in errors.
func kindName(k TKind) string {
	return [...]string{"struct", "defined", "union", "enum", "integer enum", "scalar", "null", "raw", "alias"}[k]
}

// shapeVariants resolves a union decided by the JSON shape of the value
// (RequestId: null, integer or string; EmbeddedResourceResource: an object
// with "text" or one with "blob").
func (r *resolver) shapeVariants(t *Type, infos []*branchInfo) error {
	u := t.Union
	byKind := map[string][]*Variant{}
	for _, bi := range infos {
		if bi.catchAll || bi.title == "" {
			return fmt.Errorf("%s: shape union branch needs a title", bi.n.path)
		}
		v := &Variant{Union: t, Doc: docLines(bi.n.t.Description)}
		switch {
		case bi.payload != nil || bi.inline:
			vt, err := r.variantType(t, bi.title, bi)
			if err != nil {
				return err
			}
			v.Type, v.JSONKind, v.Ptr = vt, "object", true
		default:
			ref, null, err := r.ref(bi.n)
			if err != nil {
				return err
			}
			if ref.Min != nil {
				return fmt.Errorf("%s: minimum on a shape union branch", bi.n.path)
			}
			vt := &Type{Name: t.Name + goName(bi.title), Doc: v.Doc}
			switch {
			case null && ref.Prim == "raw":
				vt.Kind, v.JSONKind = TNull, "null"
			case null:
				return fmt.Errorf("%s: nullable shape branch", bi.n.path)
			case ref.List:
				vt.Kind, vt.Scalar, v.JSONKind = TScalar, ref, "array"
			case ref.Prim == "string":
				vt.Kind, vt.Scalar, v.JSONKind = TScalar, ref, "string"
			case ref.Prim == "bool":
				vt.Kind, vt.Scalar, v.JSONKind = TScalar, ref, "boolean"
			case ref.Prim == "int" || ref.Prim == "uint":
				vt.Kind, vt.Scalar, v.JSONKind = TScalar, ref, "integer"
			case ref.Prim == "float":
				vt.Kind, vt.Scalar, v.JSONKind = TScalar, ref, "number"
			default:
				return fmt.Errorf("%s: unsupported shape branch", bi.n.path)
			}
			if err := r.add(vt); err != nil {
				return err
			}
			v.Type = vt
		}
		v.Type.VariantOf = append(v.Type.VariantOf, v)
		u.Variants = append(u.Variants, v)
		byKind[v.JSONKind] = append(byKind[v.JSONKind], v)
	}
	for kind, vs := range byKind {
		if len(vs) < 2 {
			continue
		}
		if kind != "object" && kind != "array" {
			return fmt.Errorf("%s: two %s branches cannot be told apart", t.Name, kind)
		}
		// Member lists are only complete once every def is resolved.
		r.deferred = append(r.deferred, func() error { return r.distinguishKind(t, kind, vs) })
	}
	return nil
}

func (r *resolver) distinguishKind(t *Type, kind string, vs []*Variant) error {
	obj := func(v *Variant) *Type { return v.Type }
	if kind == "array" {
		// Arrays of different objects: decided by the first item.
		obj = func(v *Variant) *Type { return v.Type.Scalar.Elem.Named }
	}
	if err := distinguish(vs, obj); err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	return nil
}

// distinguish gives each object variant the required keys that no other
// variant has as a property: their presence picks the variant.
func distinguish(vs []*Variant, obj func(*Variant) *Type) error {
	props := make([]map[string]bool, len(vs))
	for i, v := range vs {
		st := obj(v)
		if st == nil {
			return fmt.Errorf("variant %s is not an object", v.Type.Name)
		}
		props[i] = map[string]bool{}
		for _, f := range structFields(st) {
			props[i][f.JSON] = true
		}
	}
	for i, v := range vs {
		st := obj(v)
		var keys []string
		for _, f := range structFields(st) {
			if !f.Required {
				continue
			}
			unique := true
			for j := range vs {
				if j != i && props[j][f.JSON] {
					unique = false
				}
			}
			if unique {
				keys = append(keys, f.JSON)
			}
		}
		if len(keys) == 0 {
			return fmt.Errorf("variant %s has no required member the others lack", v.Type.Name)
		}
		sort.Strings(keys)
		v.Keys = keys
	}
	return nil
}
