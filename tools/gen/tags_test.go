package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestTagConstants: tags.go has exactly one constant per tagged union
// variant, named after the variant and holding the tag the codec matches.
func TestTagConstants(t *testing.T) {
	pkgs, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	sfs, err := loadSchemas(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pkgs {
		t.Run(p.surface.Go, func(t *testing.T) { checkTagConstants(t, p.files, sfs[i]) })
	}
}

func checkTagConstants(t *testing.T, files map[string][]byte, sf *schemaFile) {
	f, err := parser.ParseFile(token.NewFileSet(), "tags.go", files["tags.go"], 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range f.Decls {
		for _, s := range d.(*ast.GenDecl).Specs {
			vs := s.(*ast.ValueSpec)
			v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			got[vs.Names[0].Name] = v
		}
	}
	m, err := buildModel(sf)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, ty := range m.Types {
		if ty.Kind != TUnion || ty.Union.Tag == "" {
			continue
		}
		for _, v := range ty.Union.Variants {
			if v.Tag != "" {
				want[v.Type.Name+tagSuffix] = v.Tag
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("the model has no tagged variant")
	}
	for name, tag := range want {
		if got[name] != tag {
			t.Errorf("%s = %q, want %q", name, got[name], tag)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s names no tagged variant", name)
		}
	}
	if got["SessionUpdateAgentMessageChunkTag"] != "agent_message_chunk" || got["RequestPermissionOutcomeSelectedTag"] != "selected" {
		t.Errorf("known tags: %v", got)
	}
}
