package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
)

// goldenFeatures names, for each golden schema, code its codec (or its
// types' member rules, the acp tags) must contain:
// the construct the schema is there to exercise, so that a golden file
// cannot silently stop covering it.
var goldenFeatures = map[string][]string{
	"tagged_union":       {`jsonx.Tag(data, "kind")`, `case "circle":`, "ShapeUnknown"},
	"untagged_branch":    {`case "stdio":`, "if !ok {"},
	"open_enum":          {"d.At(0).SetString((*string)(&x.Category))", `jsonx.Enum(data, "Priority", PriorityHigh, PriorityLow)`},
	"default_on_error":   {`acp:"default,lenient"`, `acp:"omit,nullable,lenient"`},
	"skip_invalid_items": {`acp:"omit,nullable,skipinvalid"`, "jsonx.List(d.At(0), &x.Roles, decodeRole)"},
	"default_on_null":    {`acp:"required,onnull,empty"`},
	"defaults":           {"d.Defaults(x.setDefault)", "isDefault", `"{\"depth\":3}"`},
	"flattened_union":    {"ownSetting", "appendSettingTypeMembers", "verbatim"},
	"shape_union":        {"jsonx.KindNull", "jsonx.KindNumber", "jsonx.KindString"},
	"bounds":             {"minitems=1", "min=1", "jsonx.IntMinPtr(", "jsonx.MinItems(len(s), 1)"},
	"flattened_member":   {"jsonx.SetAt(d.At(0), &x.Status, decodeStatusObjectAt)", "errors.Is(err, jsonx.ErrType)", "appendStatusMembers"},
	"pattern":            {"jsonx.Set(d.At(1), &x.Currency, matchCostCurrency)", "regexp.MustCompile(`^[A-Z]{3}$`)", "jsonx.List(d.At(4), &x.Tags, matchCostTagsItem)", "s, err := matchSku(data)"},
}

// TestGolden regenerates the codec of every golden schema and compares it
// with the committed files, printing the lines that differ.
func TestGolden(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(schemas) != len(goldenFeatures) {
		t.Fatalf("%d golden schemas, %d in goldenFeatures", len(schemas), len(goldenFeatures))
	}
	for _, schema := range schemas {
		name := strings.TrimSuffix(filepath.Base(schema), ".json")
		t.Run(name, func(t *testing.T) {
			files, err := generateCodec(schema, "golden")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "golden", name)
			for file, content := range files {
				have, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatalf("%v (regenerate: go run ./tools/gen -schema tools/gen/%s -pkg golden -out tools/gen/%s)", err, filepath.ToSlash(schema), filepath.ToSlash(dir))
				}
				if d := lineDiff(string(have), string(content)); d != "" {
					t.Errorf("%s/%s is stale (regenerate: go run ./tools/gen -schema tools/gen/%s -pkg golden -out tools/gen/%s):\n%s",
						name, file, filepath.ToSlash(schema), filepath.ToSlash(dir), d)
				}
			}
			want, ok := goldenFeatures[name]
			if !ok {
				t.Fatalf("%s is not in goldenFeatures", name)
			}
			for _, s := range want {
				if !strings.Contains(string(files["codec.go"])+string(files["types.go"]), s) {
					t.Errorf("%s/codec.go no longer contains %q, the feature it is there for", name, s)
				}
			}
		})
	}
}

// lineDiff shows the span of lines where have and want differ (with two
// lines of context), or "" when they are equal.
func lineDiff(have, want string) string {
	if have == want {
		return ""
	}
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(h) && i < len(w) && h[i] == w[i] {
		i++
	}
	jh, jw := len(h), len(w)
	for jh > i && jw > i && h[jh-1] == w[jw-1] {
		jh, jw = jh-1, jw-1
	}
	var b strings.Builder
	for k := max(0, i-2); k < i; k++ {
		b.WriteString("  " + h[k] + "\n")
	}
	for _, l := range h[i:jh] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range w[i:jw] {
		b.WriteString("+ " + l + "\n")
	}
	for k := jh; k < min(len(h), jh+2); k++ {
		b.WriteString("  " + h[k] + "\n")
	}
	return b.String()
}

// TestSDK1_GoldenOutputsCompile: every golden output compiles and vets as
// a package under acpsdk (its code imports acpsdk's internal jsonx), and
// passes two round-trip tests there: the samples the generator synthesizes
// for every def and variant (each surface's roundtrip_test.go), and the
// golden's own fixtures (NAME.fixtures, beside its schema), so that a
// broken emitter fails a compile or a round trip, not only a text diff.
func TestSDK1_GoldenOutputsCompile(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fixtures, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.fixtures")); len(fixtures) != len(schemas) {
		t.Fatalf("%d golden schemas, %d fixtures files", len(schemas), len(fixtures))
	}
	var pkgs []genPkg
	for _, schema := range schemas {
		name := strings.TrimSuffix(filepath.Base(schema), ".json")
		files, err := generateCodec(schema, "golden")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := genPkg{importPath: scratchModule + "/" + name, files: files}
		if files["decls.go"], files["roundtrip_test.go"], err = goldenPackageFiles(schema, p.importPath); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pkgs = append(pkgs, p)
	}
	start := time.Now()
	out, err := goOnGenerated(t, pkgs, []string{"vet"}, []string{"test", "-vet=off", "-count=1"})
	if err != nil {
		t.Fatalf("the golden outputs do not compile or round-trip: %v\n%s", err, out)
	}
	t.Logf("go vet and go test of %d golden outputs: %v", len(pkgs), time.Since(start).Round(time.Millisecond))
}

// A golden's fixtures file has one fixture a line (# starts a comment):
//
//	Def JSON
//	Def JSON => JSON
//	Def JSON => error
//
// The def's value decodes from the first JSON and re-encodes byte for
// byte, or to the JSON after "=>" (where a leniency rule changes it), or
// does not decode.
type goldenFixture struct {
	def, in, out string // out "" for a decoding error
}

func readFixtures(file string) ([]goldenFixture, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []goldenFixture
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		def, in, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want \"Def JSON\"", file, i+1)
		}
		f := goldenFixture{def: def, in: in, out: in}
		if in, want, ok := strings.Cut(in, " => "); ok {
			f.in, f.out = in, want
			if want == "error" {
				f.out = ""
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no fixtures", file)
	}
	return out, nil
}

// goldenPackageFiles renders what makes a golden output (types.go,
// codec.go) a package at import path pkgPath: the declarations a surface
// has in its doc.go (DecodeError, Members, the error kinds), and its test
// file: the generator's sample round trip and the schema's fixtures.
func goldenPackageFiles(schema, pkgPath string) (decls, test []byte, err error) {
	e, err := schemaEmitter(schema, "golden", pkgPath)
	if err != nil {
		return nil, nil, err
	}
	d := jen.NewFilePathName(pkgPath, "golden")
	d.ImportName(jsonxPkg, "jsonx")
	e.errorAndMemberDecls(d)
	var buf bytes.Buffer
	if err := d.Render(&buf); err != nil {
		return nil, nil, err
	}
	decls = buf.Bytes()
	fixtures, err := readFixtures(strings.TrimSuffix(schema, ".json") + ".fixtures")
	if err != nil {
		return nil, nil, err
	}
	f := jen.NewFile("golden_test")
	f.ImportName(segJSON, "json")
	e.roundTripTest(f)
	var rows []jen.Code
	for _, fx := range fixtures {
		t := e.m.defs[fx.def]
		if t == nil || t.Schema == "" || t.Kind == TAlias || (t.Kind == TUnion && t.Union.Flattened && t.Schema == "") {
			return nil, nil, fmt.Errorf("fixture of %q: not a def of %s with a decoder", fx.def, schema)
		}
		rows = append(rows, jen.Values(jen.Dict{
			jen.Id("def"):    jen.Lit(fx.def),
			jen.Id("decode"): e.sampleDecoder(t),
			jen.Id("in"):     jen.Lit(fx.in),
			jen.Id("out"):    jen.Lit(fx.out),
		}))
	}
	f.Var().Id("fixtures").Op("=").Index().Struct(
		jen.List(jen.Id("def"), jen.Id("in"), jen.Id("out")).String(),
		jen.Id("decode").Func().Params(jen.Index().Byte()).Params(jen.Any(), jen.Error()),
	).Values(rows...)
	f.Comment("TestFixtures: each fixture decodes and re-encodes to what it says.")
	f.Func().Id("TestFixtures").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("fx")).Op(":=").Range().Id("fixtures")).Block(
			jen.List(jen.Id("v"), jen.Err()).Op(":=").Id("fx").Dot("decode").Call(jen.Index().Byte().Call(jen.Id("fx").Dot("in"))),
			jen.If(jen.Id("fx").Dot("out").Op("==").Lit("")).Block(
				jen.Qual(requirePkg, "Error").Call(jen.Id("t"), jen.Err(), jen.Lit("%s %s"), jen.Id("fx").Dot("def"), jen.Id("fx").Dot("in")),
				jen.Continue(),
			),
			jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s %s"), jen.Id("fx").Dot("def"), jen.Id("fx").Dot("in")),
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("marshal").Call(jen.Id("v")),
			jen.Qual(requirePkg, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("%s %s"), jen.Id("fx").Dot("def"), jen.Id("fx").Dot("in")),
			jen.Qual(requirePkg, "Equal").Call(jen.Id("t"), jen.Id("fx").Dot("out"), jen.String().Call(jen.Id("out")), jen.Lit("%s %s"), jen.Id("fx").Dot("def"), jen.Id("fx").Dot("in")),
		),
	)
	buf.Reset()
	if err := f.Render(&buf); err != nil {
		return nil, nil, err
	}
	return decls, buf.Bytes(), nil
}
