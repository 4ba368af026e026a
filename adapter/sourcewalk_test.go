package adapter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// inspectProductionCode calls visit with every syntax node of the adapter
// module's non-test Go files, skipping the directories in skip (paths
// relative to the module) and testdata; pos locates a node for a message.
func inspectProductionCode(t *testing.T, skip []string, visit func(pos func(ast.Node) token.Position, n ast.Node)) {
	t.Helper()
	fset := token.NewFileSet()
	pos := func(n ast.Node) token.Position { return fset.Position(n.Pos()) }
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "testdata" || slices.Contains(skip, path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if n != nil {
				visit(pos, n)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
}
