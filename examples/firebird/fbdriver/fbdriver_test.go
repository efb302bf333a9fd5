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
	db, d := openDB(t)
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

// openDB opens the driver under test on a Firebird database of the harness,
// with one connection.
func openDB(t *testing.T) (*sql.DB, *harness.Database) {
	t.Helper()
	d, err := provider.Open(context.Background(), harness.EngineFirebird, "firebirdsql")
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
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db, d
}

// TestNestedCursorsOnOneStatement runs one prepared statement in a
// transaction while an earlier result of it is still being read (database/sql
// hands the transaction the same driver statement both times), then again
// after both closed: every cursor reads its whole result. The unguarded
// driver fails the second query with "Attempt to reopen an open cursor".
func TestNestedCursorsOnOneStatement(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	stmt, err := db.PrepareContext(ctx, `SELECT 1 FROM RDB$DATABASE UNION ALL SELECT 2 FROM RDB$DATABASE`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	read := func(rows *sql.Rows) []int {
		t.Helper()
		var got []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
		return got
	}
	outer, err := tx.StmtContext(ctx, stmt).QueryContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !outer.Next() {
		t.Fatalf("outer cursor: no first row (%v)", outer.Err())
	}
	inner, err := tx.StmtContext(ctx, stmt).QueryContext(ctx)
	if err != nil {
		t.Fatalf("the statement again while its first cursor is open: %v", err)
	}
	if got := read(inner); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("inner cursor read %v, want [1 2]", got)
	}
	if got := read(outer); len(got) != 1 || got[0] != 2 {
		t.Errorf("rest of the outer cursor read %v, want [2]", got)
	}
	for i := range 2 {
		rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx)
		if err != nil {
			t.Fatalf("the statement after both closed (call %d): %v", i, err)
		}
		if got := read(rows); len(got) != 2 {
			t.Errorf("the statement after both closed (call %d) read %v, want [1 2]", i, got)
		}
	}
}
