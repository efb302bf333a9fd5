package mydialect_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness" // also registers the "jdbcbridge" driver
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/examples/mydialect"
)

// provider hands out fresh databases: the harness starts one JDBC bridge for
// the process and gives every Open a new in-memory H2 database.
var provider *harness.Provider

func TestMain(m *testing.M) {
	// The suite's multi-process tests re-execute this binary as workers:
	// a worker runs its job and exits here.
	conformance.MaybeWorker()
	provider = harness.NewProvider()
	code := m.Run()
	provider.Close()
	harness.CloseJavaEngines()
	plugin.CleanupClients()
	os.Exit(code)
}

// freshH2 returns a new empty H2 database, or skips the test with the
// harness's reason when there is no Java or no H2 jar here.
func freshH2(t *testing.T) *harness.Database {
	t.Helper()
	db, err := provider.Open(context.Background(), harness.EngineH2, "jdbcbridge")
	var skipped *harness.Skipped
	if errors.As(err, &skipped) {
		t.Skipf("no H2 here: %s", skipped.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestConformance runs the shared conformance suite against the plugin
// binary, out of process, on fresh H2 databases: what a third party runs
// from its own repository. The error rules are checked there on H2's real
// errors (errors/*), so this package has no test of its own for them.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite on H2 takes about 20 s")
	}
	freshH2(t) // probe: skip early, with the reason, when H2 is unavailable

	// Build the plugin binary exactly as it ships.
	bin := filepath.Join(t.TempDir(), "tidemark-dialect-mydialect")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tidemark-dialect-mydialect")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}

	m := conformance.Run(t, conformance.Target{
		Name:   "mydialect",
		Load:   plugin.LoadOptions{Path: bin},
		Driver: "jdbcbridge",
		Fresh: func(ctx context.Context) (string, func(), error) {
			db, err := provider.Open(ctx, harness.EngineH2, "jdbcbridge")
			if err != nil {
				return "", nil, err
			}
			return db.DSN, nil, nil
		},
	})
	t.Logf("\n%s", m)
}

// Example_catalogue shows what the example overrides on top of dialect.ANSI().
func Example_catalogue() {
	c := mydialect.Catalogue()
	ansi := dialect.ANSI()
	fmt.Println(c.Identity.Name, c.Identity.DriverName, c.Positions)
	for _, id := range dialect.RequiredStatements(c.Positions) {
		if c.Statements[id] != ansi.Statements[id] {
			fmt.Println("overridden:", id)
		}
	}
	_, kept := c.Statements[dialect.PositionAllocated]
	fmt.Println("position.allocated kept:", kept)
	// Output:
	// mydialect jdbcbridge COUNTER_ROW
	// overridden: position.allocate
	// overridden: saga.complete
	// overridden: saga.deadline_counts
	// overridden: saga.deadline_retry
	// overridden: saga.deadline_schedule
	// overridden: saga.deadlines_due
	// overridden: saga.lock_acquire
	// overridden: saga.lock_insert
	// overridden: saga.lock_read
	// overridden: saga.purge
	// position.allocated kept: false
}
