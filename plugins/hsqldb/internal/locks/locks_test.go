package locks_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness" // also registers the "jdbcbridge" driver
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

var provider *harness.Provider

func TestMain(m *testing.M) {
	conformance.MaybeWorker() // the suite's multi-process tests re-execute this binary
	provider = harness.NewProvider()
	code := m.Run()
	provider.Close()
	harness.CloseJavaEngines()
	plugin.CleanupClients()
	os.Exit(code)
}

// only narrows the run to the test-name prefixes in TIDEMARK_LOCKS_ONLY
// (space-separated); nil runs every test.
func only() []string {
	return strings.Fields(os.Getenv("TIDEMARK_LOCKS_ONLY"))
}

// TestConformance runs the suite on HSQLDB in LOCKS transaction control,
// through the variant's plugin binary, out of process.
// TIDEMARK_LOCKS_ONLY (space-separated test-name prefixes) narrows it.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the whole suite on HSQLDB LOCKS is too long for a short run")
	}
	probe, err := provider.Open(context.Background(), harness.EngineHSQLDBLocks, "jdbcbridge")
	var skipped *harness.Skipped
	if errors.As(err, &skipped) {
		t.Skipf("no HSQLDB here: %s", skipped.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = probe
	bin := filepath.Join(t.TempDir(), "tidemark-dialect-hsqldb-locks")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tidemark-dialect-hsqldb-locks").CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	m := conformance.Run(t, conformance.Target{
		Name:   "hsqldb (LOCKS)",
		Load:   plugin.LoadOptions{Path: bin},
		Driver: "jdbcbridge",
		Only:   only(),
		Fresh: func(ctx context.Context) (string, func(), error) {
			db, err := provider.Open(ctx, harness.EngineHSQLDBLocks, "jdbcbridge")
			if err != nil {
				return "", nil, err
			}
			return db.DSN, nil, nil
		},
	})
	t.Logf("\n%s", m)
}
