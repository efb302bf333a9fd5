package sqlcount

import (
	"context"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// TestCountsByTextAndRows counts statements by text, transaction control
// by word, and the rows the driver delivered, through direct and prepared
// statements.
func TestCountsByTextAndRows(t *testing.T) {
	ctx := context.Background()
	c := Counts{ByText: true, CountRows: true}
	db, err := Open("sqlite", "file:"+filepath.Join(t.TempDir(), "c.db"), &c)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	const create, insert, sel = "CREATE TABLE t (v INTEGER)", "INSERT INTO t (v) VALUES (?)", "SELECT v FROM t ORDER BY v"
	if _, err := db.ExecContext(ctx, create); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tx.PrepareContext(ctx, insert)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := st.ExecContext(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows0 := c.Rows.Load()
	rows, err := db.QueryContext(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
		if got := c.Rows.Load() - rows0; got != int64(n) {
			t.Errorf("after row %d the driver had delivered %d rows", n, got)
		}
	}
	rows.Close()
	if n != 3 {
		t.Fatalf("read %d rows, want 3", n)
	}
	want := map[string]int64{create: 1, insert: 3, sel: 1, "BEGIN": 1, "COMMIT": 1}
	got := map[string]int64{}
	for _, x := range c.Texts() {
		got[x.SQL] = x.Count
	}
	for q, k := range want {
		if got[q] != k {
			t.Errorf("%q counted %d times, want %d (all: %v)", q, got[q], k, got)
		}
	}
	if s, x := c.Statements.Load(), c.Tx.Load(); s != 5 || x != 2 {
		t.Errorf("Statements %d, Tx %d; want 5 and 2", s, x)
	}
	c.ResetTexts()
	if len(c.Texts()) != 0 {
		t.Error("ResetTexts left counts by text")
	}
}
