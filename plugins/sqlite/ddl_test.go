package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

func catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity:      dialect.Identity{Name: "sqlite", Placeholder: dialect.PlaceholderQuestion},
		Scripts:       dialect.Scripts(dialect.ObjectTable, ddl()),
		QueryColumns:  Catalogue().QueryColumns,
		Introspection: introspection(),
	}
}

func TestDDLMatchesGolden(t *testing.T) {
	ddlgolden.Check(t, catalogue(), "testdata/golden")
}

func TestDDLIdempotentOnSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "ddl.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := catalogue()
	ddlgolden.RunTwice(t, db, c, "")

	cols, idx := ddlgolden.Introspect(t, db, c, "account_summary")
	want := [][]string{
		{"read_model_id", "VARCHAR", "255", "<nil>", "<nil>", "0"},
		{"message_id", "CHAR", "36", "<nil>", "<nil>", "0"},
		{"iban", "VARCHAR", "255", "<nil>", "<nil>", "1"},
		{"balance", "DECIMAL", "<nil>", "38", "10", "1"},
	}
	if len(cols) != len(want) {
		t.Fatalf("columns: %v", cols)
	}
	for i := range want {
		for j := range want[i] {
			if cols[i][j] != want[i][j] {
				t.Errorf("column %d: got %v, want %v", i, cols[i], want[i])
				break
			}
		}
	}
	got := map[string]string{}
	for _, r := range idx {
		got[r[0]] = r[1] + "/" + r[2] + "/" + r[3]
	}
	for name, w := range map[string]string{
		"idx_account_summary_iban":           "iban/1/1",
		"idx_account_summary_balance":        "balance/0/1",
		"sqlite_autoindex_account_summary_1": "read_model_id/1/1",
	} {
		if got[name] != w {
			t.Errorf("index %s: got %q, want %q (all: %v)", name, got[name], w, idx)
		}
	}

	// The counter seed never overwrites: a third run keeps a moved counter.
	if _, err := db.Exec("UPDATE EVENT_STORE_GLOBAL_POSITION SET val = 42 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	stmts, _, _, err := ddlgolden.Statements(c, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	var v int
	if err := db.QueryRow("SELECT val FROM EVENT_STORE_GLOBAL_POSITION WHERE id = 1").Scan(&v); err != nil || v != 42 {
		t.Fatalf("counter after re-run: %d, %v", v, err)
	}

	// Keys compare exactly (BINARY collation): case variants are two rows.
	for _, k := range []string{"a-1", "A-1"} {
		if _, err := db.Exec("INSERT INTO account_summary (read_model_id, message_id) VALUES (?, ?)", k, "00000000-0000-0000-0000-000000000000"); err != nil {
			t.Fatalf("insert %s: %v", k, err)
		}
	}
}
