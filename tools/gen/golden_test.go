package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFeatures names, for each golden schema, code its codec (or its
// types' member rules, the acp tags) must contain:
// the construct the schema is there to exercise, so that a golden file
// cannot silently stop covering it.
var goldenFeatures = map[string][]string{
	"tagged_union":       {`jsonx.Tag(data, "kind")`, `case "circle":`, "ShapeUnknown"},
	"untagged_branch":    {`case "stdio":`, "if !ok {"},
	"open_enum":          {"return Category(s), err", `jsonx.Enum(data, "Priority", PriorityHigh, PriorityLow)`},
	"default_on_error":   {`acp:"default,lenient"`, `acp:"omit,nullable,lenient"`},
	"skip_invalid_items": {`acp:"omit,nullable,skipinvalid"`, "jsonx.List(d.At(0), &x.Roles, decodeRole)"},
	"default_on_null":    {`acp:"required,onnull,empty"`},
	"defaults":           {"d.Defaults(x.setDefault)", "isDefault", `"{\"depth\":3}"`},
	"flattened_union":    {"ownSetting", "appendSettingTypeMembers", "verbatim"},
	"shape_union":        {"jsonx.KindNull", "jsonx.KindNumber", "jsonx.KindString"},
	"bounds":             {"minitems=1", "min=1", "jsonx.IntMinPtr(", "jsonx.MinItems(len(s), 1)"},
	"flattened_member":   {"jsonx.SetAt(d.At(0), &x.Status, decodeStatusObjectAt)", "errors.Is(err, jsonx.ErrType)", "appendStatusMembers"},
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
