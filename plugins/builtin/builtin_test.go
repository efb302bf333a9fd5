package builtin_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
	_ "github.com/tidemarkdb/tidemark/plugins/builtin/drivers"
)

// TestRegistryIsWhole checks the registry against the tree: every built-in
// describes itself under its name and has its plugin command, every target
// names a built-in, a harness engine and a linked driver, and every
// built-in is tested by at least one target.
func TestRegistryIsWhole(t *testing.T) {
	names := builtin.Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %v, not sorted", names)
	}
	for _, b := range builtin.All() {
		l, err := plugin.InProcess(context.Background(), b.New())
		if err != nil {
			t.Errorf("%s: %v", b.Name, err)
			continue
		}
		if l.Catalogue.Identity.Name != b.Name {
			t.Errorf("built-in %q describes itself as %q", b.Name, l.Catalogue.Identity.Name)
		}
		if d, ok := builtin.Lookup(b.Name); !ok || d == nil {
			t.Errorf("Lookup(%q) = %v, %v", b.Name, d, ok)
		}
		cmd := strings.TrimPrefix(builtin.CmdPackage(b.Name), "github.com/tidemarkdb/tidemark/plugins/")
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(cmd), "main.go")); err != nil {
			t.Errorf("%s: no plugin command: %v", b.Name, err)
		}
	}
	tested := map[string]bool{}
	seen := map[string]bool{}
	for _, tg := range builtin.Targets() {
		if seen[tg.Name] {
			t.Errorf("target %q listed twice", tg.Name)
		}
		seen[tg.Name] = true
		if _, ok := builtin.Lookup(tg.Dialect); !ok {
			t.Errorf("target %q: no built-in %q", tg.Name, tg.Dialect)
		}
		if !slices.Contains(harness.Engines, tg.Engine) {
			t.Errorf("target %q: engine %q is not a harness engine (%v)", tg.Name, tg.Engine, harness.Engines)
		}
		if !slices.Contains(sql.Drivers(), tg.Driver) {
			t.Errorf("target %q: driver %q is not linked by package drivers", tg.Name, tg.Driver)
		}
		if tg.Lane == "" {
			t.Errorf("target %q has no lane", tg.Name)
		}
		tested[tg.Dialect] = true
	}
	for _, n := range names {
		if !tested[n] {
			t.Errorf("built-in %q has no conformance target", n)
		}
	}
	if _, ok := builtin.Lookup("nosuch"); ok {
		t.Error("Lookup(nosuch) found a dialect")
	}
}
