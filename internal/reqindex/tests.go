package reqindex

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// TestNames returns the names of every Test, Fuzz and Benchmark function
// in the _test.go files of the module rooted at root (not in testdata, in
// a directory whose name starts with "." or "_", in node_modules, or in a
// module nested in it).
func TestNames(root string) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isTestName(fn.Name.Name) {
				names = append(names, fn.Name.Name)
			}
		}
		return nil
	})
	return names, err
}

func skipDir(path, name string) bool {
	if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil // another module
}

func isTestName(name string) bool {
	for _, p := range []string{"Test", "Fuzz", "Benchmark"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// CitedBy reports whether a name cites id: its dashless form appears with
// no capital letter right before it and no digit right after, so LT1 is
// not cited by TestLT12_… nor SS2 by TestSSS2_….
func CitedBy(id string, names []string) bool {
	tok := strings.ReplaceAll(id, "-", "")
	for _, name := range names {
		for i := 0; ; {
			j := strings.Index(name[i:], tok)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(tok)
			before := start == 0 || !(name[start-1] >= 'A' && name[start-1] <= 'Z')
			after := end == len(name) || !(name[end] >= '0' && name[end] <= '9')
			if before && after {
				return true
			}
			i = start + 1
		}
	}
	return false
}

// citedToken is an ID as a test name cites it: capitals, then digits.
var citedToken = regexp.MustCompile(`[A-Z]+[0-9]+`)

// CitedIDs maps each ID that names cite, by the rule of CitedBy and with a
// prefix in prefixes, to the first name citing it.
func CitedIDs(names []string, prefixes map[string]bool) map[string]string {
	out := map[string]string{}
	for _, name := range names {
		for _, tok := range citedToken.FindAllString(name, -1) {
			digits := strings.IndexAny(tok, "0123456789")
			id := tok[:digits] + "-" + tok[digits:]
			if _, seen := out[id]; !seen && prefixes[tok[:digits]] {
				out[id] = name
			}
		}
	}
	return out
}

// prefix is an ID's letters: CFG for CFG-1.
func prefix(id string) string {
	p, _, _ := strings.Cut(id, "-")
	return p
}
