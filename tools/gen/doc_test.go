package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestGeneratedDocs: every exported identifier the generator emits has a doc
// comment, and type docs start with the type's name.
func TestGeneratedDocs(t *testing.T) {
	pkgs, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		checkDocs(t, p.files)
	}
}

func checkDocs(t *testing.T, files map[string][]byte) {
	fset := token.NewFileSet()
	for name, src := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if name == "doc.go" && f.Doc == nil {
			t.Errorf("doc.go has no package doc")
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil {
					t.Errorf("%s: func %s has no doc", name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						doc := d.Doc
						if s.Doc != nil {
							doc = s.Doc
						}
						if doc == nil || !strings.HasPrefix(doc.Text(), s.Name.Name+" ") {
							t.Errorf("%s: type %s: doc must start with its name", name, s.Name.Name)
						}
						checkFields(t, name, s)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil {
								t.Errorf("%s: %s has no doc", name, n.Name)
							}
						}
					}
				}
			}
		}
	}
}

func checkFields(t *testing.T, file string, s *ast.TypeSpec) {
	var fields []*ast.Field
	switch tt := s.Type.(type) {
	case *ast.StructType:
		fields = tt.Fields.List
	case *ast.InterfaceType:
		fields = tt.Methods.List
	}
	for _, f := range fields {
		for _, n := range f.Names {
			if n.IsExported() && f.Doc == nil {
				t.Errorf("%s: %s.%s has no doc", file, s.Name.Name, n.Name)
			}
		}
	}
}
