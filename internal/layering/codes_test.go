package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"coupond/errcode"
)

// sameSpelling are string constants that are spelt like an error code but are
// values of another enumeration.
var sameSpelling = map[string]string{
	"services/redemptions.go": errcode.Cancelled, // ReleaseCancelled, a release reason
	"models/order.go":         errcode.Cancelled, // OrderCancelled, an order status
}

// Nobody spells an error code but errcode: every other package names the
// table's constants, so a code cannot drift from its status or go missing
// from the README.
func TestOnlyErrcodeSpellsCodes(t *testing.T) {
	codes := map[string]bool{}
	for _, s := range errcode.All() {
		codes[s.Code] = true
	}
	root := "../.."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", "bench", "web", "errcode", "graph/generated", "graph/model":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err == nil && codes[v] && sameSpelling[rel] != v {
				t.Errorf("%s: spells the error code %s; use errcode's constant", fset.Position(lit.Pos()), v)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
