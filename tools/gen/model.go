package main

import (
	"encoding/json"
	"regexp"
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
	// Pattern is a string's pattern, enforced on decode (ErrInvalidValue);
	// nil otherwise.
	Pattern *Pattern
}

// Pattern is a string's pattern keyword: a regular expression every
// decoded value must match somewhere (JSON Schema does not anchor it),
// compiled with Go's regexp (RE2 syntax).
type Pattern struct {
	Expr string // as the schema writes it
	// Name is the Go name its check is generated under (matchName,
	// patternName): the object and member, or the def, it belongs to
	// (CostCurrency, CostTagsItem, Sku).
	Name string
	// Where says the same for people (Cost.currency, Cost.tags items).
	Where string
	// Example is a short string that matches, for generated samples.
	Example string

	re *regexp.Regexp
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
	// Patterns are the string patterns of all types, sorted by Name.
	Patterns []*Pattern

	usedOverrides map[string]bool // the override entries this schema used
}
