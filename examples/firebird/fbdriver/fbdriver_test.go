package fbdriver_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/examples/firebird/fbdriver"
)

var provider *harness.Provider

func TestMain(m *testing.M) {
	provider = harness.NewProvider()
	code := m.Run()
	provider.Close()
	os.Exit(code)
}

// driverUnderTest is fbdriver.Name; FBDRIVER_TEST_DRIVER=firebirdsql runs
// the same test on the unguarded driver, which panics (the defect).
func driverUnderTest() string {
	if d := os.Getenv("FBDRIVER_TEST_DRIVER"); d != "" {
		return d
	}
	return fbdriver.Name
}

// TestFailedBeginDoesNotCrash loses a pooled connection's attachment while
// a prepared statement lives on it, begins a transaction on it (which
// fails), then keeps using the pool and the statement: every later call
// succeeds on a fresh connection, and nothing panics.
func TestFailedBeginDoesNotCrash(t *testing.T) {
	ctx := context.Background()
	d, err := provider.Open(ctx, harness.EngineFirebird, "firebirdsql")
	var skipped *harness.Skipped
	if errors.As(err, &skipped) {
		if harness.Required(harness.EngineFirebird) {
			t.Fatalf("Firebird is required here but cannot be provided: %s", skipped.Reason)
		}
		t.Skipf("no Firebird here: %s", skipped.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driverUnderTest(), d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	admin, err := sql.Open("firebirdsql", d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	stmt, err := db.PrepareContext(ctx, `SELECT 1 FROM RDB$DATABASE`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var id int64
	if err := db.QueryRowContext(ctx, `SELECT CURRENT_CONNECTION FROM RDB$DATABASE`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = ?`, id); err != nil {
		t.Fatalf("ending the attachment: %v", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	t.Logf("begin on the lost attachment: %v", err)
	if err == nil {
		_ = tx.Rollback()
	}
	for i := range 3 {
		var one int
		if err := stmt.QueryRowContext(ctx).Scan(&one); err != nil || one != 1 {
			t.Fatalf("statement after the lost attachment (call %d): %d, %v", i, one, err)
		}
		if err := db.PingContext(ctx); err != nil {
			t.Fatalf("ping after the lost attachment: %v", err)
		}
	}
}
