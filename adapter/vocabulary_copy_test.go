package adapter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// contractDir holds the one copy of the event types, error kinds and turn
// outcomes.
const contractDir = "internal/contract"

// TestVocabularyHasOneCopy fails when the contract vocabulary appears a
// second time in the adapter's production code: a string literal spelling an
// event type or error kind (such as a package's own `Notification =
// "notification"`), or another named EventType or Kind type. Everything
// outside internal/contract uses contract's constants, directly or through
// this package's aliases, so nothing converts between two vocabularies.
// acprun (cmd/) is exempt: its exit reasons and text tags are its own output
// format, some of which happen to share a spelling.
func TestVocabularyHasOneCopy(t *testing.T) {
	values := contractValues(t)
	require.Contains(t, values, "turn_completed")
	require.Contains(t, values, "port_exit")

	inspectProductionCode(t, []string{contractDir, "cmd"}, func(pos func(ast.Node) token.Position, n ast.Node) {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && values[s] {
				t.Errorf("%s: %q is a second copy of a contract value; use internal/contract's constant", pos(n), s)
			}
		case *ast.TypeSpec:
			if (n.Name.Name == "EventType" || n.Name.Name == "Kind") && !n.Assign.IsValid() {
				t.Errorf("%s: type %s is a second vocabulary; alias internal/contract's", pos(n), n.Name.Name)
			}
		}
	})
}

// contractValues reads the string constants internal/contract declares.
func contractValues(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(contractDir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	values := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						values[s] = true
					}
				}
			}
		}
	}
	return values
}
