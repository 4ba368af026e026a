package main

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// The generated round-trip test: a sample document for every def (and every
// variant of every union) synthesized from the model, so that a schema bump
// is covered without anyone writing fixtures. Full samples set every member
// (plus an unknown one) in canonical order and must re-encode byte for byte;
// minimal samples set only required members and must survive
// decode → encode → decode.

const (
	sampleUnknownMember = `"zzUnknown":[1,{"a":null}]`
	sampleRaw           = `[1,"two",{"3":null}]`
	sampleObject        = `{"n":12345678901234567890}`
	sampleUnknownTag    = "zz_not_in_schema"
)

type sampler struct {
	depth int
}

func (s *sampler) ref(ref *Ref, full bool) string {
	switch {
	case ref.List:
		if !full && ref.MinItems == 0 {
			return "[]"
		}
		items := make([]string, max(ref.MinItems, 1))
		for i := range items {
			items[i] = s.ref(ref.Elem, full)
		}
		return "[" + strings.Join(items, ",") + "]"
	case ref.Map:
		if !full {
			return "{}"
		}
		return `{"k":` + s.ref(ref.Elem, full) + "}"
	case ref.Named != nil:
		return s.named(ref.Named, full)
	}
	return samplePrim(ref)
}

func samplePrim(ref *Ref) string {
	switch ref.Prim {
	case "string":
		if ref.Pattern != nil {
			return `"` + ref.Pattern.Example + `"`
		}
		return `"s"`
	case "bool":
		return "true"
	case "int":
		if ref.Min != nil && *ref.Min > -7 {
			return fmt.Sprint(*ref.Min)
		}
		return "-7"
	case "uint":
		if ref.Min != nil && *ref.Min > 7 {
			return fmt.Sprint(*ref.Min)
		}
		return "7"
	case "float":
		return "1.5"
	case "raw":
		return sampleRaw
	case "object":
		return sampleObject
	}
	panic("samplePrim " + ref.Prim)
}

func (s *sampler) named(t *Type, full bool) string {
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > 40 {
		panic("sample recursion through " + t.Name)
	}
	switch t.Kind {
	case TStruct:
		return "{" + strings.Join(s.members(t, full), ",") + "}"
	case TDefined:
		return "{" + strings.Join(s.members(t.Base, full), ",") + "}"
	case TEnum:
		return fmt.Sprintf("%q", t.Values[0].Str)
	case TIntEnum:
		return fmt.Sprint(t.Values[0].Int)
	case TScalar:
		return s.ref(t.Scalar, full)
	case TRaw:
		return sampleRaw
	case TNull:
		return "null"
	case TUnion:
		return s.variant(t.Union.Variants[0], full)
	}
	panic("sample " + t.Name)
}

// members are the sample members of an object, in encoding order.
func (s *sampler) members(t *Type, full bool) []string {
	var out []string
	for _, f := range t.Fields {
		if !full && !f.Required {
			continue
		}
		out = append(out, fmt.Sprintf("%q:%s", f.JSON, s.ref(f.Ref, full)))
	}
	if t.Flat != nil {
		out = append(out, s.variantMembers(t.Flat.Ref.Named.Union.Variants[0], full)...)
	} else if full && !t.IsUnknown {
		out = append(out, sampleUnknownMember)
	}
	return out
}

// variant is the JSON of one union variant.
func (s *sampler) variant(v *Variant, full bool) string {
	u := v.Union.Union
	if u.Tag == "" {
		switch v.JSONKind {
		case "object":
			return s.named(v.Type, full)
		case "null":
			return "null"
		}
		return s.ref(v.Type.Scalar, full)
	}
	return "{" + strings.Join(s.variantMembers(v, full), ",") + "}"
}

func (s *sampler) variantMembers(v *Variant, full bool) []string {
	u := v.Union.Union
	var out []string
	if v.Tag != "" {
		out = append(out, fmt.Sprintf("%q:%q", u.Tag, v.Tag))
	}
	st := v.Type
	if st.Kind == TDefined {
		st = st.Base
	}
	if v.JSONKind != "" && v.JSONKind != "object" {
		panic("variantMembers of a scalar variant")
	}
	return append(out, s.members(st, full)...)
}

// decodeSample is a func([]byte) (any, error) that decodes a value of t
// as a user would: a union through its Unmarshal function, any other type
// through json.Unmarshal (which calls its UnmarshalJSON). pkg names the
// package under test.
func decodeSample(pkg string, t *Type) string {
	if t.Kind == TUnion {
		return fmt.Sprintf("func(b []byte) (any, error) {\nreturn %s.Unmarshal%s(b)\n}", pkg, t.Name)
	}
	return fmt.Sprintf("func(b []byte) (any, error) {\nv := new(%s.%s)\nreturn v, json.Unmarshal(b, v)\n}", pkg, t.Name)
}

// sampleDecoder is decodeSample as jennifer code, for a golden output's
// fixtures test.
func (e *emitter) sampleDecoder(t *Type) *jen.Statement {
	pkg := e.m.Surface.Name()
	return newTestPrinter(pkg, e.pkgPath).qualify(decodeSample(pkg, t))
}

// samples are the rows of the samples table: a full and a minimal
// document for every def and every variant of every union.
func (e *emitter) samples() []string {
	s, pkg := &sampler{}, e.m.Surface.Name()
	var rows []string
	add := func(name, decode, full, min string) {
		rows = append(rows, fmt.Sprintf("{\ndecode: %s,\nfull: %q,\nmin: %q,\nname: %q,\n}", decode, full, min, name))
	}
	for _, t := range e.m.Types {
		switch {
		case t.Kind == TUnion && !t.Union.Flattened:
			dec := decodeSample(pkg, t)
			for _, v := range t.Union.Variants {
				add(t.Name+"/"+v.Type.Name, dec, s.variant(v, true), s.variant(v, false))
			}
			if u := t.Union.Unknown; u != nil {
				unk := fmt.Sprintf(`{%q:%q,"k":[1]}`, t.Union.Tag, sampleUnknownTag)
				add(t.Name+"/"+u.Name, dec, unk, unk)
			}
		case t.Schema != "" && t.Kind != TUnion && t.Kind != TAlias && len(t.VariantOf) == 0:
			add(t.Name, decodeSample(pkg, t), s.named(t, true), s.named(t, false))
		}
	}
	return rows
}

// printRoundTripTest prints roundtrip_test.go: the samples and the tests
// that run them.
func (e *emitter) printRoundTripTest(g *printer) {
	g.P(`// samples has a document for every def and every union variant.
var samples = []struct {
	name      string
	decode    func([]byte) (any, error)
	full, min string
}{%s}
`, strings.Join(e.samples(), ", "))
	g.Text(roundTripTests)
}

// roundTripTest adds roundtrip_test.go's declarations to f (a golden
// output's package, in its compile test).
func (e *emitter) roundTripTest(f *jen.File) {
	g := newTestPrinter(e.m.Surface.Name(), e.pkgPath)
	e.printRoundTripTest(g)
	f.Add(g.code())
}

// roundTripTests run the samples: TestSDK2_RoundTripEveryDef,
// TestSDK5_ReversedMemberOrderRoundTrips (every sample with the members of
// each of its objects in reverse order, tags last, unknown members first,
// re-encodes byte for byte, so that an object whose members no single
// layout sees, a flattened union's or a variant's with two tags, shows up
// there) and FuzzSDK3_Unions.
const roundTripTests = `// marshal calls the value's own MarshalJSON when it has one (json.Marshal
// would compact raw bytes the codec keeps verbatim), else json.Marshal.
func marshal(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(v)
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestSDK2_RoundTripEveryDef: every def (SDK-2) decodes from a full sample and
// re-encodes byte for byte, unknown members included (SDK-5); a minimal
// sample survives decode → encode → decode.
func TestSDK2_RoundTripEveryDef(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			v, err := s.decode([]byte(s.full))
			require.NoError(t, err)
			out, err := marshal(v)
			require.NoError(t, err)
			require.Equal(t, s.full, string(out))

			v, err = s.decode([]byte(s.min))
			require.NoError(t, err)
			out, err = json.Marshal(v)
			require.NoError(t, err)
			again, err := s.decode(out)
			require.NoError(t, err, "re-decoding %s", out)
			require.Equal(t, v, again)
		})
	}
}

// reversed is data, compact JSON, with the members of every object in reverse order.
func reversed(data []byte) []byte {
	switch jsonx.KindOf(data) {
	case jsonx.KindObject:
		var it jsonx.ObjectIter
		var members [][]byte
		for err := it.Reset(data); err == nil && it.Next(); {
			m, v := it.Member(), it.Value()
			members = append(members, append(append([]byte{}, m[:len(m)-len(v)]...), reversed(v)...))
		}
		b := []byte{'{'}
		for i := len(members) - 1; i >= 0; i-- {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, members[i]...)
		}
		return append(b, '}')
	case jsonx.KindArray:
		var it jsonx.ArrayIter
		b := []byte{'['}
		for err := it.Reset(data); err == nil && it.Next(); {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, reversed(it.Value())...)
		}
		return append(b, ']')
	}
	return data
}

// TestSDK5_ReversedMemberOrderRoundTrips: every sample with each object's
// members in reverse order (tags last, unknown members first) re-encodes byte
// for byte: decoding keeps a peer's member order (SDK-5).
func TestSDK5_ReversedMemberOrderRoundTrips(t *testing.T) {
	for _, s := range samples {
		for _, doc := range []string{s.full, s.min} {
			in := reversed([]byte(doc))
			v, err := s.decode(in)
			require.NoError(t, err, "%s: %s", s.name, in)
			out, err := marshal(v)
			require.NoError(t, err, "%s: %s", s.name, in)
			require.Equal(t, string(in), string(out), s.name)
		}
	}
}

// FuzzSDK3_Unions feeds every union (and every def) arbitrary bytes: decoding
// never panics, and whatever decodes re-encodes and decodes equal (SDK-3, SDK-5).
// The samples are the seed corpus, so it runs as an ordinary test.
func FuzzSDK3_Unions(f *testing.F) {
	for i, s := range samples {
		f.Add(i, []byte(s.full))
		f.Add(i, []byte(s.min))
	}
	f.Fuzz(func(t *testing.T, i int, data []byte) {
		s := samples[uint(i)%uint(len(samples))]
		v, err := s.decode(data)
		if err != nil {
			return
		}
		out, err := marshal(v)
		require.NoError(t, err, "%s: re-encoding %q", s.name, data)
		again, err := s.decode(out)
		require.NoError(t, err, "%s: re-decoding %s", s.name, out)
		require.Equal(t, v, again, "%s: %s", s.name, out)
	})
}
`
