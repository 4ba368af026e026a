package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxEmitterLines bounds an emitter function, from "func" to its closing
// brace: an emitter is read beside the Go it prints, and a long one hides
// that shape.
const maxEmitterLines = 60

// TestEmittersAreShort: no function of the emitters (emit*.go) or their
// printer is longer than maxEmitterLines.
func TestEmittersAreShort(t *testing.T) {
	files, err := filepath.Glob("emit*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "printer.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxEmitterLines {
				t.Errorf("%s: %s is %d lines, more than %d", name, fd.Name.Name, n, maxEmitterLines)
			}
		}
	}
}
