package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

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
