package main

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// doc prints doc.go: the package doc, the go:generate line, the pin's
// constants and the declarations every package shares.
func (e *emitter) doc(g *printer) error {
	if e.m.byName["ProtocolVersion"] == nil {
		return fmt.Errorf("the schema has no ProtocolVersion def")
	}
	g.pkgDoc = strings.TrimSpace(packageDoc)
	gogen := "go run acpkit.dev/tools/gen -root " + e.m.Surface.RootRel()
	if !e.m.Surface.Runtime {
		g.pkgDoc = e.surfaceIntro() + strings.TrimPrefix(g.pkgDoc, runtimeIntro)
		gogen += " -only " + e.m.Surface.Go
	}
	p := e.m.Schema.pin
	g.P(`//go:generate %s

// The schema this package was generated from (schema/pin.json).
const (
	// SchemaPackage is the npm package that ships the pinned schema.
	SchemaPackage = %q
	// SchemaVersion is that package's version.
	SchemaVersion = %q
	// SchemaSHA256 is the sha256 of the pinned schema file.
	SchemaSHA256 = %q
)

// LatestProtocolVersion is the protocol version the pinned schema describes
// (taken from its path %s in the pin).
const LatestProtocolVersion ProtocolVersion = %d
`, gogen, p.Package, p.Version, e.m.Schema.sha, e.m.Surface.File, e.m.Schema.version)
	printSharedDecls(g)
	return nil
}

// printSharedDecls prints what every package's codec and users share:
// DecodeError, Members and the error kinds.
func printSharedDecls(g *printer) {
	g.Text(`// DecodeError reports why a message does not decode, with the JSON path of
// the failing value (Path, e.g. "update.content") and the cause (Err, one
// of the Err* kinds below, usable with errors.Is). Use errors.As to get it.
type DecodeError = jsonx.DecodeError

// Members keeps the members of a JSON object that its schema type does not
// define (the Extra field of every object), verbatim and in arrival order.
type Members = jsonx.Members

// The kinds of DecodeError causes.
var (
	// ErrSyntax: the input is not valid JSON.
	ErrSyntax = jsonx.ErrSyntax
	// ErrType: a value has the wrong JSON type.
	ErrType = jsonx.ErrType
	// ErrMissingField: a required member is absent.
	ErrMissingField = jsonx.ErrMissingField
	// ErrInvalidValue: a value is not allowed (range, closed enum, length).
	ErrInvalidValue = jsonx.ErrInvalidValue
	// ErrEncode: a Go value cannot be encoded (nil required union, bad raw JSON).
	ErrEncode = jsonx.ErrEncode
)
`)
}

// errorAndMemberDecls adds the shared declarations to f (a golden
// output's package, in its compile test).
func (e *emitter) errorAndMemberDecls(f *jen.File) {
	g := newPrinter()
	printSharedDecls(g)
	f.Add(g.code())
}

// runtimeIntro opens the runtime surface's package doc; the other surfaces
// replace it with surfaceIntro.
const runtimeIntro = `Package gen holds the Agent Client Protocol wire types, generated from the
pinned ACP JSON Schema by tools/gen. Nothing here is written by hand.`

// surfaceIntro opens the package doc of a surface acpsdk is not built on.
func (e *emitter) surfaceIntro() string {
	s := e.m.Surface
	return fmt.Sprintf(`Package %s holds the Agent Client Protocol wire types of %s, generated
from %s (pinned in schema/pin.json) by tools/gen. Nothing here is written
by hand.

It is an opt-in surface: acpkit.dev/acpsdk/gen is the stable protocol, and
this package is a separate set of types for the same wire, following the same
rules, so that features not in the stable schema can be used typed. Its
dispatchers (DispatchAgent, DispatchClient) validate their params themselves.`, s.Name(), s.Release, s.File)
}

const packageDoc = `
` + runtimeIntro + `

Every schema definition has a Go type: objects are structs, tagged unions
are sealed interfaces, const unions are typed enums, and the methods of the
protocol are a table (Methods) plus a typed API (AgentPeer, ClientPeer,
Agent, Client, DispatchAgent, DispatchClient). Method names and the tag that
selects each union variant are constants (MethodSessionPrompt,
SessionUpdateAgentMessageChunkTag).

# Decoding rules

Decoding is generated code: the document is validated once (strict JSON,
UTF-8), then each object is walked member by member by a small scanner
(acpkit.dev/acpsdk/internal/jsonx; string escapes go through
segmentio/encoding); each member is looked up in its type's descriptor of
members and rules (read once, at init, from the struct's json names and acp
tags), and decoded by the generated switch on its index:

  - Required members are enforced. A missing one is a *DecodeError whose
    Path names it ("update.content: missing required field"); wrong types,
    out-of-range integers and values outside a closed enum are errors too,
    with the path of the failing value.
  - Optional members follow one rule: a member that may be absent is a
    pointer when it has no schema default and its Go type is a scalar, enum
    or struct, so absent (nil) and zero stay distinct. Slices, maps, raw JSON
    and unions are never pointers: nil means absent. A member with a schema
    default is a plain value and gets the default when absent. In this
    schema a member that allows null is an optional one, and null means the
    same as absent (nil).
  - Tagged unions decode by their discriminator alone: one scan finds the tag,
    then only that variant is decoded (never try-each). A branch without a
    tag (McpServerStdio, AuthMethodAgent) is the variant when the tag is
    absent, and also when the tag is the branch's title ("stdio", "agent"),
    which it then keeps as a member of its own. An unknown tag gives the
    union's …Unknown variant, which keeps the raw bytes and re-encodes them
    byte for byte; an …Unknown whose Raw is not an object with the tag does
    not encode. A known tag whose variant is malformed is an error, never an
    unknown.
  - Unions decided by shape (RequestID, EmbeddedResourceResource) pick the
    variant from the JSON kind and, for objects, from the required members
    only one variant has.
  - Open enums (with the schema's catch-all branch) keep values they do not
    know; closed enums reject them. ErrorCode is an integer with the schema's
    constants.
  - The schema's leniency keywords are honoured wherever they appear:
    x-deserialize-default-on-error (a malformed member decodes to its default
    instead of failing the message), x-deserialize-skip-invalid-items (an
    array item that fails to decode is dropped), x-deserialize-default-on-null
    (null decodes as an empty list or map).

# Nothing is lost (SDK-5)

  - _meta is kept as raw JSON bytes (Meta) and re-emitted as is, so numbers
    like 12345678901234567890 inside it survive exactly.
  - Members an object does not define are kept in its Extra field, raw and in
    order, and re-emitted after the known members.
  - Integers are parsed from their text into sized Go integers, never through
    float64. Members with no type in the schema (rawInput, data) are raw JSON.

Re-encoding a decoded message reproduces it: members keep the order they
arrived in, a member that was absent and took its schema default stays
absent (while it still equals the default), and an explicit null stays null
(while the member is unset). This is recorded only when a message departs
from canonical form, so canonical input costs nothing. An object whose
members a flattened union shares (SessionConfigOption and the like, and a
union variant holding one, tags included) keeps such input whole and
re-emits it while the value still encodes the same.
What is normalized: whitespace between known members, string escapes, map
keys (sorted), malformed members replaced by a leniency keyword, and
numbers typed "double": those members are float64 and re-render in Go's
shortest form (1.0 becomes 1, 1e2 becomes 100, 0.50 becomes 0.5), the same
number written differently, which is accepted behaviour; numbers whose
text must survive live in raw members (_meta, Extra, untyped members). A
value built in Go encodes in schema order, tag first, then Extra.

A type that is a union variant encodes and decodes in the union's form (with
its tag) in its own MarshalJSON/UnmarshalJSON too; UnmarshalX decodes a union
value on its own.
`

// synthesizedDoc is the first doc sentence of a type that is not a def:
// a union variant or a flattened union.
func synthesizedDoc(t *Type) string {
	if len(t.VariantOf) == 0 {
		return t.Name + " is a generated type"
	}
	v := t.VariantOf[0]
	u := v.Union
	switch {
	case t.IsUnknown:
		return fmt.Sprintf("%s is the %s variant for a tag this schema does not know", t.Name, u.Name)
	case v.Tag != "":
		return fmt.Sprintf("%s is the %q variant of %s", t.Name, v.Tag, u.Name)
	case u.Union.Tag != "":
		return fmt.Sprintf("%s is the %s variant without a %q tag", t.Name, u.Name, u.Union.Tag)
	default:
		return fmt.Sprintf("%s is the %s variant of %s", t.Name, v.JSONKind, u.Name)
	}
}
