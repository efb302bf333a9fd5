package saga

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoProcessClockDecidesDueness: due-ness, expiries and ages are
// judged by the database clock only. The package reads the process clock
// to pace the lease's renewal during a batch (held) and the scheduled
// purge's interval (purge) and the check of other types' overdue deadlines
// (checkForeign), never for a deadline, a lock's expiry or a
// purge's age.
func TestNoProcessClockDecidesDueness(t *testing.T) {
	allowed := map[string]bool{"held": true, "purge": true, "checkForeign": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since" || sel.Sel.Name == "Until") {
					found++
					if !allowed[fn.Name.Name] {
						t.Errorf("%s: %s reads the process clock (time.%s)", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	if found == 0 {
		t.Errorf("no read of the process clock found at all: the scan is broken (held paces renewals with it)")
	}
}
