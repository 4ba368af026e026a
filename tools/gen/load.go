package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// Pin is schema/pin.json: the upstream npm package whose schemas are
// generated, and one Surface per schema file it ships.
type Pin struct {
	Package  string     `json:"package"`
	Version  string     `json:"version"`
	Surfaces []*Surface `json:"surfaces"`
}

// Surface is one schema file of the pinned package and the Go package
// generated from it.
type Surface struct {
	// File is the schema's path in the repository, which is also its
	// path in the npm package (schema/v1/schema.json).
	File string `json:"file"`
	// SHA256 is the file's sha256, as shipped.
	SHA256 string `json:"sha256"`
	// Release says what the schema is, for people.
	Release string `json:"release"`
	// Go is the generated package's directory, relative to the repository
	// root (acpsdk/gen); its import path is acpkit.dev/ plus Go and its
	// name the last element.
	Go string `json:"go"`
	// Runtime marks the one surface acpsdk itself is built on: it
	// registers the trusted decoders with acpsdk and carries the example.
	Runtime bool `json:"runtime,omitempty"`
}

// ImportPath is the generated package's import path.
func (s *Surface) ImportPath() string { return "acpkit.dev/" + s.Go }

// Name is the generated package's name.
func (s *Surface) Name() string { return path.Base(s.Go) }

// RootRel is the repository root seen from the generated package's
// directory (its go:generate line runs there).
func (s *Surface) RootRel() string {
	return strings.TrimSuffix(strings.Repeat("../", strings.Count(s.Go, "/")+1), "/")
}

// node is one schema object as the generator sees it: the standard
// keywords from go-jsonschema's model, plus what that model drops, taken
// from a raw pass over the same bytes: member order (properties are a map
// there), every x-* annotation, discriminator, unevaluatedProperties and the
// exact bytes of default and const.
type node struct {
	t        *schemas.Type
	keys     []string                   // this object's keywords, in order
	rawKids  map[string]json.RawMessage // raw value of each keyword
	propKeys []string                   // properties, in schema order
	path     string                     // JSON pointer-ish location, for errors
}

// knownKeywords is every keyword the generator understands. Anything else
// fails generation: a schema bump that introduces a new construct must be
// looked at, not silently ignored.
var knownKeywords = map[string]bool{
	"$schema": true, "$defs": true, "$ref": true, "title": true, "description": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "const": true, "enum": true,
	"items": true, "format": true, "default": true, "minimum": true, "maximum": true,
	"minLength": true, "discriminator": true, "unevaluatedProperties": true,
	"minItems": true, "contentEncoding": true, "pattern": true,
}

// knownExtensions are the vendor keywords the generator honours.
var knownExtensions = map[string]bool{
	"x-side": true, "x-method": true, "x-docs-ignore": true,
	"x-deserialize-default-on-error":   true,
	"x-deserialize-skip-invalid-items": true,
	"x-deserialize-default-on-null":    true,
}

// schemaFile is the loaded schema: its definitions as nodes.
type schemaFile struct {
	pin     Pin
	surf    *Surface
	sha     string
	version int // the protocol version the schema path pins (v1 → 1)
	defs    map[string]*node
	rawDefs map[string]json.RawMessage
	order   []string       // def names in schema order
	refs    map[string]int // how many $refs point at each def
}

var refPattern = regexp.MustCompile(`"\$ref"\s*:\s*"#/\$defs/([^"]+)"`)

func loadPin(root string) (Pin, error) {
	var pin Pin
	b, err := os.ReadFile(filepath.Join(root, "schema", "pin.json"))
	if err != nil {
		return pin, err
	}
	if err := json.Unmarshal(b, &pin); err != nil {
		return pin, fmt.Errorf("schema/pin.json: %w", err)
	}
	if pin.Package == "" || pin.Version == "" || len(pin.Surfaces) == 0 {
		return pin, fmt.Errorf("schema/pin.json: package, version and surfaces are required")
	}
	runtime, dirs := 0, map[string]bool{}
	for i, s := range pin.Surfaces {
		if s.File == "" || len(s.SHA256) != 64 || !goDir.MatchString(s.Go) {
			return pin, fmt.Errorf("schema/pin.json: surface %d: file, sha256 and go (a package directory under acpsdk/) are required", i)
		}
		if dirs[s.Go] {
			return pin, fmt.Errorf("schema/pin.json: two surfaces generate %s", s.Go)
		}
		dirs[s.Go] = true
		if s.Runtime {
			runtime++
		}
	}
	if runtime != 1 {
		return pin, fmt.Errorf("schema/pin.json: exactly one surface must be the runtime's, found %d", runtime)
	}
	return pin, nil
}

// goDir is what a surface's package directory may be.
var goDir = regexp.MustCompile(`^acpsdk(/[a-z][a-z0-9]*)+$`)

// loadSchemas loads every pinned surface's schema, in pin order.
func loadSchemas(root string) ([]*schemaFile, error) {
	pin, err := loadPin(root)
	if err != nil {
		return nil, err
	}
	var out []*schemaFile
	for _, s := range pin.Surfaces {
		sf, err := loadSchema(root, pin, s)
		if err != nil {
			return nil, err
		}
		out = append(out, sf)
	}
	return out, nil
}

var versionDir = regexp.MustCompile(`(?:^|/)v([0-9]+)/`)

func loadSchema(root string, pin Pin, surf *Surface) (*schemaFile, error) {
	file := filepath.Join(root, filepath.FromSlash(surf.File))
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	if sha != surf.SHA256 {
		return nil, fmt.Errorf("%s: sha256 %s does not match the pin %s (run make schema)", surf.File, sha, surf.SHA256)
	}
	m := versionDir.FindStringSubmatch(surf.File)
	if m == nil {
		return nil, fmt.Errorf("schema/pin.json: file %q does not name a protocol version directory (vN/)", surf.File)
	}
	version, _ := strconv.Atoi(m[1])
	return parseSchema(pin, surf, sha, version, data)
}

// parseSchema reads the schema data of surf, one of pin's surfaces (its
// sha256 and protocol version already known).
func parseSchema(pin Pin, surf *Surface, sha string, version int, data []byte) (*schemaFile, error) {
	std, err := schemas.FromJSONReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", surf.File, err)
	}
	rootKeys, rootKids, err := orderedObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", surf.File, err)
	}
	for _, k := range rootKeys {
		switch k {
		case "$schema", "title", "$defs":
		case "anyOf":
			// The root anyOf only documents the JSON-RPC envelopes; they are
			// also $defs (AgentRequest, …), which is what gets generated.
		default:
			if !knownExtensions[k] {
				return nil, fmt.Errorf("%s: unsupported root keyword %q", surf.File, k)
			}
		}
	}
	defKeys, defKids, err := orderedObject(rootKids["$defs"])
	if err != nil {
		return nil, fmt.Errorf("$defs: %w", err)
	}
	sf := &schemaFile{pin: pin, surf: surf, sha: sha, version: version, defs: map[string]*node{}, rawDefs: defKids, order: defKeys, refs: map[string]int{}}
	for _, m := range refPattern.FindAllSubmatch(data, -1) {
		sf.refs[string(m[1])]++
	}
	for _, name := range defKeys {
		t := std.Definitions[name]
		if t == nil {
			return nil, fmt.Errorf("$defs/%s: missing from go-jsonschema's model", name)
		}
		n, err := newNode(t, defKids[name], "#/$defs/"+name)
		if err != nil {
			return nil, err
		}
		sf.defs[name] = n
	}
	return sf, nil
}

// orderedObject splits a raw JSON object into its keys in order and their
// raw values.
func orderedObject(raw []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("want an object")
	}
	var keys []string
	kids := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := kids[k]; dup {
			return nil, nil, fmt.Errorf("duplicate key %q", k)
		}
		keys = append(keys, k)
		kids[k] = v
	}
	return keys, kids, nil
}

// newNode pairs a go-jsonschema Type with the raw object it came from and
// checks every keyword is one the generator handles.
func newNode(t *schemas.Type, raw json.RawMessage, path string) (*node, error) {
	n := &node{t: t, path: path, rawKids: map[string]json.RawMessage{}}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("true")) {
		return n, nil
	}
	keys, kids, err := orderedObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n.keys, n.rawKids = keys, kids
	for _, k := range keys {
		if strings.HasPrefix(k, "x-") {
			if !knownExtensions[k] {
				return nil, fmt.Errorf("%s: unknown extension keyword %q", path, k)
			}
			continue
		}
		if !knownKeywords[k] {
			return nil, fmt.Errorf("%s: unsupported keyword %q", path, k)
		}
	}
	if p, ok := kids["properties"]; ok {
		pk, _, err := orderedObject(p)
		if err != nil {
			return nil, fmt.Errorf("%s/properties: %w", path, err)
		}
		n.propKeys = pk
	}
	return n, nil
}

// child returns the node for a subschema of n: kw is the keyword, sub the
// property name (for properties) or index (for allOf/anyOf/oneOf).
func (n *node) child(kw string, sub string, t *schemas.Type) (*node, error) {
	raw := n.rawKids[kw]
	path := n.path + "/" + kw
	switch kw {
	case "properties":
		_, kids, err := orderedObject(raw)
		if err != nil {
			return nil, err
		}
		raw = kids[sub]
		path += "/" + sub
	case "allOf", "anyOf", "oneOf":
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		i, _ := strconv.Atoi(sub)
		raw = list[i]
		path += "/" + sub
	}
	if t == nil {
		return nil, fmt.Errorf("%s: no model", path)
	}
	return newNode(t, raw, path)
}

func (n *node) prop(name string) (*node, error) {
	return n.child("properties", name, n.t.Properties[name])
}

func (n *node) branches(kw string) ([]*node, error) {
	var ts []*schemas.Type
	switch kw {
	case "allOf":
		ts = n.t.AllOf
	case "anyOf":
		ts = n.t.AnyOf
	case "oneOf":
		ts = n.t.OneOf
	}
	out := make([]*node, len(ts))
	for i, t := range ts {
		c, err := n.child(kw, strconv.Itoa(i), t)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// unionBranches is the branches of a union: its oneOf, or else its anyOf.
func (n *node) unionBranches() ([]*node, error) {
	if len(n.t.OneOf) > 0 {
		return n.branches("oneOf")
	}
	return n.branches("anyOf")
}

func (n *node) has(kw string) bool { _, ok := n.rawKids[kw]; return ok }

// minItems reads the minItems keyword (0 when absent).
func (n *node) minItems() int {
	var v int
	if raw, ok := n.rawKids["minItems"]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// flag reads a boolean x-* annotation.
func (n *node) flag(kw string) bool {
	raw, ok := n.rawKids[kw]
	return ok && string(bytes.TrimSpace(raw)) == "true"
}

// str reads a string keyword from the raw pass (x-side, x-method).
func (n *node) str(kw string) string {
	var s string
	if raw, ok := n.rawKids[kw]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// discriminator is the discriminator.propertyName keyword go-jsonschema drops.
func (n *node) discriminator() string {
	raw, ok := n.rawKids["discriminator"]
	if !ok {
		return ""
	}
	var d struct {
		PropertyName string `json:"propertyName"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.PropertyName
}

// refName resolves a local "#/$defs/X" reference.
func refName(ref string) (string, error) {
	const p = "#/$defs/"
	if !strings.HasPrefix(ref, p) {
		return "", fmt.Errorf("unsupported $ref %q (only local #/$defs/ references)", ref)
	}
	return strings.TrimPrefix(ref, p), nil
}

// types returns the JSON types of n without "null", and whether null is allowed.
func (n *node) types() ([]string, bool) {
	var out []string
	null := false
	for _, t := range n.t.Type {
		if t == "null" {
			null = true
			continue
		}
		out = append(out, t)
	}
	sort.Strings(out)
	return out, null
}

// keywordAt is where a keyword occurs: the path of its schema.
type keywordAt struct{ path, keyword string }

// keywordPaths finds every occurrence of the keywords kws in the defs and
// their subschemas, in schema order.
func (sf *schemaFile) keywordPaths(kws []string) []keywordAt {
	var out []keywordAt
	for _, name := range sf.order {
		walkSchema(sf.rawDefs[name], "#/$defs/"+name, kws, &out)
	}
	return out
}

// walkSchema appends the occurrences of kws in the schema raw (at path)
// and its subschemas to out; values that are data (default, const, enum)
// are not schemas and are not walked.
func walkSchema(raw json.RawMessage, path string, kws []string, out *[]keywordAt) {
	keys, kids, err := orderedObject(raw)
	if err != nil {
		return // a boolean schema
	}
	for _, k := range keys {
		if slices.Contains(kws, k) {
			*out = append(*out, keywordAt{path, k})
		}
		switch k {
		case "properties":
			names, props, _ := orderedObject(kids[k])
			for _, name := range names {
				walkSchema(props[name], path+"/properties/"+name, kws, out)
			}
		case "items", "additionalProperties", "not", "unevaluatedProperties":
			walkSchema(kids[k], path+"/"+k, kws, out)
		case "allOf", "anyOf", "oneOf":
			var list []json.RawMessage
			_ = json.Unmarshal(kids[k], &list)
			for i, sub := range list {
				walkSchema(sub, path+"/"+k+"/"+strconv.Itoa(i), kws, out)
			}
		}
	}
}
