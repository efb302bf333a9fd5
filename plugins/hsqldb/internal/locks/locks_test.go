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

// unresolved are the tests left out of a default run, with what is known:
// each is an open question, not an expectation the engine gives up.
// TIDEMARK_LOCKS_ALL=1 runs them too.
var unresolved = map[string]string{
	"consumer/torture_one_consumer_three_processes_kill9": "did not end within 8 minutes on HSQLDB LOCKS (a worker process killed mid-apply; the survivors wait, cause not yet found)",
	"consumer/leases_spread_kill9_three_processes":        "did not end within 4 minutes on HSQLDB LOCKS (worker processes killed with -9; cause not yet found)",
}

// only is the default selection: every test but the unresolved ones.
func only(t *testing.T) []string {
	if v := os.Getenv("TIDEMARK_LOCKS_ONLY"); v != "" {
		return strings.Fields(v)
	}
	var names []string
	for _, tc := range conformance.Tests() {
		if why, ok := unresolved[tc.Name]; ok && os.Getenv("TIDEMARK_LOCKS_ALL") == "" {
			t.Logf("left out: %s: %s", tc.Name, why)
			continue
		}
		names = append(names, tc.Name)
	}
	return names
}

// TestConformance runs the suite on HSQLDB in LOCKS transaction control,
// through the variant's plugin binary, out of process.
// TIDEMARK_LOCKS_ONLY (space-separated test-name prefixes) narrows it.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole suite on a locking engine")
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
		Only:   only(t),
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
