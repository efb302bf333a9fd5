package noifne_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/sqlite/internal/noifne"
	_ "modernc.org/sqlite"
)

var provider *harness.Provider

func TestMain(m *testing.M) {
	conformance.MaybeWorker() // the suite's multi-process tests re-execute this binary
	provider = harness.NewProvider()
	code := m.Run()
	provider.Close()
	plugin.CleanupClients()
	os.Exit(code)
}

// TestNoIfNotExistsLeft: the variant's DDL has no IF NOT EXISTS, so the
// suite below exercises the core's guards.
func TestNoIfNotExistsLeft(t *testing.T) {
	c := noifne.Catalogue()
	for _, sc := range c.Scripts {
		for _, st := range sc.Statements {
			if strings.Contains(strings.ToUpper(st), "IF NOT EXISTS") {
				t.Errorf("script %s keeps IF NOT EXISTS: %s", sc.Name, st)
			}
		}
	}
}

// TestConformance runs the whole suite (concurrent first starts in
// separate processes included) on the variant, out of process: every
// area that lays out tables (query tables, sagas, rebuild shadows, topics)
// does so through the core's guards.
func TestConformance(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tidemark-dialect-sqlite-noifne")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tidemark-dialect-sqlite-noifne").CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	m := conformance.Run(t, conformance.Target{
		Name:   "sqlite (no IF NOT EXISTS)",
		Load:   plugin.LoadOptions{Path: bin},
		Driver: "sqlite",
		Fresh: func(ctx context.Context) (string, func(), error) {
			db, err := provider.Open(ctx, harness.EngineSQLite, "sqlite")
			if err != nil {
				return "", nil, err
			}
			return db.DSN, nil, nil
		},
	})
	t.Logf("\n%s", m)
}
