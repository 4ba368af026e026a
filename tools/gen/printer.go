package main

import (
	"fmt"
	"go/scanner"
	"go/token"
	"strings"

	"github.com/dave/jennifer/jen"
)

// printer collects the Go source of one generated file, a line at a time,
// as protogen's GeneratedFile does: the emitters write the Go they mean
// (g.P("return jsonx.Tag(data, %q)", tag)), and gofmt, run on the whole
// file, indents and aligns it.
//
// A package the generated code uses is written by its usual name
// (jsonx.Tag, json.RawMessage, context.Context); code finds those
// qualified identifiers with go/scanner (so strings and comments are left
// alone) and hands each to jennifer as jen.Qual, which writes the import
// block. That is jennifer's whole job here, with the file header.
type printer struct {
	b strings.Builder
	// pkgs maps the package names the text may use to their import paths.
	pkgs map[string]string
	// pkgDoc is the package doc comment, in doc.go.
	pkgDoc string
}

// Import paths of the packages generated code uses.
const (
	jsonxPkg = "acpkit.dev/acpsdk/internal/jsonx"
	// descriptorPkg carries the package's descriptor (trusted dispatchers
	// included) to acpsdk.
	descriptorPkg = "acpkit.dev/acpsdk/internal/surface"
	segJSON       = "github.com/segmentio/encoding/json"
	requirePkg    = "github.com/stretchr/testify/require"
)

// generatedImports are the packages generated code names, by the name it
// uses for them.
var generatedImports = map[string]string{
	"jsonx":   jsonxPkg,
	"json":    segJSON,
	"surface": descriptorPkg,
	"context": "context",
	"errors":  "errors",
	"sort":    "sort",
	"strings": "strings",
	"testing": "testing",
	"require": requirePkg,
	"goleak":  "go.uber.org/goleak",
	"regexp":  "regexp",
}

// newPrinter returns a printer for a file of the generated package; a
// test file (package X_test) also names the package itself, as name.
func newPrinter() *printer { return &printer{pkgs: generatedImports} }

// newTestPrinter returns a printer for the external test file of the
// package name at importPath, which it qualifies by name.
func newTestPrinter(name, importPath string) *printer {
	pkgs := map[string]string{name: importPath}
	for k, v := range generatedImports {
		pkgs[k] = v
	}
	return &printer{pkgs: pkgs}
}

// P writes one line, formatted as by fmt.Sprintf (a format of several
// lines writes them all).
func (g *printer) P(format string, args ...any) {
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

// Text writes src as it is (Go source whose % signs are not verbs).
func (g *printer) Text(src string) {
	g.b.WriteString(src)
	if !strings.HasSuffix(src, "\n") {
		g.b.WriteByte('\n')
	}
}

// Doc writes lines as a // comment, one line each (trailing spaces
// dropped; an empty line is an empty comment line).
func (g *printer) Doc(lines ...string) {
	for _, l := range lines {
		if l = strings.TrimRight(l, " \t"); l == "" {
			g.b.WriteString("//\n")
			continue
		}
		g.b.WriteString("// " + l + "\n")
	}
}

// code is what was written, as jennifer code (see qualify).
func (g *printer) code() *jen.Statement { return g.qualify(g.b.String()) }

// qualify is src as jennifer code: the text, with each qualified
// identifier of a package g knows made a jen.Qual, so that the file
// imports it.
func (g *printer) qualify(src string) *jen.Statement {
	var out []jen.Code
	last := 0
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	var prev token.Token
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.IDENT && prev != token.PERIOD && g.pkgs[lit] != "" {
			start := int(pos) - 1
			if sel, ok := selector(&s); ok {
				out = append(out, jen.Id(src[last:start]), jen.Qual(g.pkgs[lit], sel.name))
				last = sel.end
				prev = token.IDENT
				continue
			}
		}
		prev = tok
	}
	out = append(out, jen.Id(src[last:]))
	return jen.Custom(jen.Options{}, out...)
}

// selected is the identifier after a package name, and the offset where
// it ends.
type selected struct {
	name string
	end  int
}

// selector scans ". Name" after a package name.
func selector(s *scanner.Scanner) (selected, bool) {
	if _, tok, _ := s.Scan(); tok != token.PERIOD {
		return selected{}, false
	}
	pos, tok, lit := s.Scan()
	if tok != token.IDENT {
		return selected{}, false
	}
	return selected{lit, int(pos) - 1 + len(lit)}, true
}

// braced is head followed by a block of lines: "head {}" when there are
// none, as gofmt keeps an empty block on one line.
func braced(head string, lines []string) string {
	if len(lines) == 0 {
		return head + " {}"
	}
	return head + " {\n" + strings.Join(lines, "\n") + "\n}"
}
