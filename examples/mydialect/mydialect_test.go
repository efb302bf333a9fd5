package mydialect_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness" // also registers the "jdbcbridge" driver
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
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
	dialect.CleanupClients()
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
// from its own repository.
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

	conformance.Run(t, conformance.Target{
		Name:   "mydialect",
		Load:   dialect.LoadOptions{Path: bin},
		Driver: "jdbcbridge",
		Fresh: func(ctx context.Context) (string, func(), error) {
			db, err := provider.Open(ctx, harness.EngineH2, "jdbcbridge")
			if err != nil {
				return "", nil, err
			}
			return db.DSN, nil, nil
		},
	})
	t.Logf("\n%s", conformance.DefaultMatrix)
}

// TestErrorRules checks what the suite does not: that the error rules
// classify H2's real errors, including those where H2 departs from the
// standard SQLSTATEs that dialect.ANSI() maps.
func TestErrorRules(t *testing.T) {
	h2db := freshH2(t)
	ctx := context.Background()
	db, err := sql.Open(h2db.DriverName, h2db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat := mydialect.Catalogue()
	mine, err := sqlerr.NewClassifier(cat.Errors)
	if err != nil {
		t.Fatal(err)
	}
	ansi, err := sqlerr.NewClassifier(dialect.ANSI().Errors)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE PARENT (id INT PRIMARY KEY)`,
		`CREATE TABLE EVENTS (id UUID PRIMARY KEY, aggregate_id VARCHAR(50), sequence_no BIGINT, parent INT REFERENCES PARENT (id), UNIQUE (aggregate_id, sequence_no))`,
		`INSERT INTO PARENT VALUES (1)`,
		`INSERT INTO EVENTS VALUES ('0190f3c4-8a4e-7c3b-9a51-2f1e7b6d8c90', 'a', 0, 1)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	cases := []struct {
		name       string
		query      string
		want, ansi dialect.ErrorClass // "" = unclassified
	}{
		{"same event id", `INSERT INTO EVENTS VALUES ('0190f3c4-8a4e-7c3b-9a51-2f1e7b6d8c90', 'b', 0, 1)`, dialect.ErrDuplicateEventID, dialect.ErrUniqueViolation},
		{"same sequence number", `INSERT INTO EVENTS VALUES ('0190f3c4-8a4e-7c3b-9a51-2f1e7b6d8c91', 'a', 0, 1)`, dialect.ErrUniqueViolation, dialect.ErrUniqueViolation},
		{"missing parent (H2: 23506)", `INSERT INTO EVENTS VALUES ('0190f3c4-8a4e-7c3b-9a51-2f1e7b6d8c92', 'c', 0, 9)`, dialect.ErrForeignKeyViolation, ""},
		{"child exists (23503)", `DELETE FROM PARENT`, dialect.ErrForeignKeyViolation, dialect.ErrForeignKeyViolation},
		{"undefined table (42S02)", `SELECT * FROM NO_SUCH_TABLE`, dialect.ErrUndefinedTable, dialect.ErrUndefinedTable},
	}
	for _, c := range cases {
		_, err := db.ExecContext(ctx, c.query)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if got := mine.Classify(err); got != c.want {
			t.Errorf("%s: classified %q, want %q (%v)", c.name, got, c.want, err)
		}
		if got := ansi.Classify(err); got != c.ansi {
			t.Errorf("%s: ANSI rules alone classify %q, expected %q", c.name, got, c.ansi)
		}
	}

	// A lock wait that reaches H2's LOCK_TIMEOUT: no standard SQLSTATE.
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE PARENT SET id = id WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.ExecContext(ctx, `SET LOCK_TIMEOUT 100`); err != nil {
		t.Fatal(err)
	}
	_, err = waiter.ExecContext(ctx, `UPDATE PARENT SET id = id WHERE id = 1`)
	if got := mine.Classify(err); got != dialect.ErrLockTimeout {
		t.Errorf("lock wait past LOCK_TIMEOUT: classified %q, want %q (%v)", got, dialect.ErrLockTimeout, err)
	}

	// The clock statement, which no conformance test reads.
	var now time.Time
	if err := db.QueryRowContext(ctx, cat.Statements[dialect.DatabaseNow]).Scan(&now); err != nil {
		t.Fatalf("%s: %v", dialect.DatabaseNow, err)
	}
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Errorf("database clock %v is %v away from ours", now, d)
	}
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
	// position.allocated kept: false
}
