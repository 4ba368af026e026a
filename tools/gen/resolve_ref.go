package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// ref resolves a property/items schema to a Ref; null reports that null is
// allowed.
func (r *resolver) ref(n *node) (*Ref, bool, error) {
	t := n.t
	switch {
	case t.Ref != "":
		name, err := refName(t.Ref)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", n.path, err)
		}
		d, err := r.def(name)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", n.path, err)
		}
		return &Ref{Named: d}, false, nil
	case len(t.AllOf) == 1 && len(t.Type) == 0 && len(n.propKeys) == 0:
		c, err := n.child("allOf", "0", t.AllOf[0])
		if err != nil {
			return nil, false, err
		}
		return r.ref(c)
	case len(t.AnyOf) > 0 || len(t.OneOf) > 0:
		return r.inlineUnion(n)
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
	ref, err := r.typed(n, types[0])
	return ref, null, err
}

// inlineUnion resolves a oneOf/anyOf that is not a def: null branches make
// it nullable, and what is left must be one schema, or a union whose value
// is kept raw (any value, method payloads, plain JSON kinds).
func (r *resolver) inlineUnion(n *node) (*Ref, bool, error) {
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

// typed resolves a schema of one JSON type (besides null), with the
// keywords that refine that type.
func (r *resolver) typed(n *node, typ string) (*Ref, error) {
	t := n.t
	if n.has("minItems") && typ != "array" {
		return nil, fmt.Errorf("%s: minItems on a non-array", n.path)
	}
	if n.has("contentEncoding") && typ != "string" {
		return nil, fmt.Errorf("%s: contentEncoding on a non-string", n.path)
	}
	switch typ {
	case "string":
		// Formats and encodings that Go keeps as text are strings, not
		// validated on decode; any other stops generation.
		if f := t.Format; f != "" && !textFormats[f] {
			return nil, fmt.Errorf("%s: unsupported string format %q", n.path, f)
		}
		if enc, ok := n.rawKids["contentEncoding"]; ok && string(bytes.TrimSpace(enc)) != `"base64"` {
			return nil, fmt.Errorf("%s: unsupported contentEncoding %s", n.path, enc)
		}
		pattern, err := r.pattern(n)
		return &Ref{Prim: "string", Pattern: pattern}, err
	case "boolean":
		return &Ref{Prim: "bool"}, nil
	case "number":
		if t.Format != "double" {
			return nil, fmt.Errorf("%s: unsupported number format %q", n.path, t.Format)
		}
		return &Ref{Prim: "float"}, nil
	case "integer":
		return intRef(n)
	case "array":
		if t.Items == nil {
			return nil, fmt.Errorf("%s: array without items", n.path)
		}
		elem, err := r.elem(n, "items", "array items", t.Items)
		if err != nil {
			return nil, err
		}
		return &Ref{List: true, Elem: elem, MinItems: n.minItems()}, nil
	case "object":
		if len(n.propKeys) > 0 {
			return nil, fmt.Errorf("%s: inline object not supported", n.path)
		}
		ap := t.AdditionalProperties
		if ap == nil || isEmptySchema(n.rawKids["additionalProperties"]) {
			return &Ref{Prim: "object"}, nil
		}
		elem, err := r.elem(n, "additionalProperties", "map values", ap)
		if err != nil {
			return nil, err
		}
		return &Ref{Map: true, Elem: elem}, nil
	}
	return nil, fmt.Errorf("%s: unsupported type %q", n.path, typ)
}

// elem resolves the schema of a list's items or a map's values (what,
// for errors): not nullable, and without the bounds only members check.
func (r *resolver) elem(n *node, kw, what string, t *schemas.Type) (*Ref, error) {
	in, err := newNode(t, n.rawKids[kw], n.path+"/"+kw)
	if err != nil {
		return nil, err
	}
	elem, null, err := r.ref(in)
	if err != nil {
		return nil, err
	}
	if null {
		return nil, fmt.Errorf("%s: nullable %s not supported", n.path, what)
	}
	if err := checkedOnlyAsMember(elem, in.path); err != nil {
		return nil, err
	}
	return elem, nil
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

// intRef resolves an integer schema: its format is its Go type.
func intRef(n *node) (*Ref, error) {
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
		return nil, fmt.Errorf("%s: unsupported integer format %q", n.path, t.Format)
	}
	// maximum must be what the Go type already enforces; a minimum it does
	// not imply (v2's line numbers, from 1) is checked on decode.
	if t.Minimum != nil && !(ref.Prim == "uint" && *t.Minimum == 0) {
		m := int64(*t.Minimum)
		if float64(m) != *t.Minimum || (ref.Prim == "uint" && m < 0) {
			return nil, fmt.Errorf("%s: minimum %v is not an integer the format %s can hold", n.path, *t.Minimum, t.Format)
		}
		ref.Min = &m
	}
	if t.Maximum != nil && !(ref.Prim == "uint" && ref.Bits == 16 && *t.Maximum == 65535) {
		return nil, fmt.Errorf("%s: maximum %v not implied by format %s", n.path, *t.Maximum, t.Format)
	}
	return ref, nil
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
