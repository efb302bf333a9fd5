package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

// TestRealEngineDDL runs every DDL statement, filled with the spec's example
// names, twice on a real MySQL or MariaDB server, then checks that 4-byte
// UTF-8 survives a payload and a key column, and that the introspection
// queries answer. It needs TIDEMARK_MARIADB_DSN or TIDEMARK_MYSQL_DSN (a
// go-sql-driver DSN whose account may create databases) and creates, then
// drops, a database of its own.
//
// Set the server's default character set to latin1 (MariaDB's compiled-in
// default) to prove that no table depends on it.
func TestRealEngineDDL(t *testing.T) {
	dsn := os.Getenv("TIDEMARK_MARIADB_DSN")
	if dsn == "" {
		dsn = os.Getenv("TIDEMARK_MYSQL_DSN")
	}
	if dsn == "" {
		t.Skip("TIDEMARK_MARIADB_DSN / TIDEMARK_MYSQL_DSN not set")
	}
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	buf := make([]byte, 4)
	_, _ = rand.Read(buf)
	dbName := "tm_ddl_" + hex.EncodeToString(buf)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+dbName); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(ctx, "DROP DATABASE "+dbName)

	cfg.DBName = dbName
	cfg.ParseTime = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version, dbCharset string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@character_set_database").Scan(&version, &dbCharset); err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s, database default character set %s", version, dbCharset)

	c := testCatalogue()
	runTwice(t, db, c, ddlgolden.ExampleNames())
	// The spec's default names too (EVENT_STORE, AGGREGATE_SNAPSHOTS, …).
	defaults := map[string]string{"query_table": "ACCOUNT_SUMMARY_DEFAULT"}
	for k, v := range dialect.DefaultNames {
		defaults[k] = v
	}
	runTwice(t, db, c, defaults)

	// No table may have fallen back to the database's default character set.
	rows, err := db.QueryContext(ctx, `SELECT table_name, table_collation FROM information_schema.tables
WHERE table_schema = DATABASE() AND table_collation NOT LIKE 'utf8mb4%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tbl, coll string
		_ = rows.Scan(&tbl, &coll)
		t.Errorf("table %s has collation %s", tbl, coll)
	}
	rows.Close()

	checkFourByteUTF8(t, db)
	checkIntrospection(t, db, c.Introspection)
}

// runTwice runs every script of c, filled with names, twice; the query-table
// indexes run only when IndexExists finds none, as the core runs them. The
// first run must create both example indexes, the second none.
func runTwice(t *testing.T, db *sql.DB, c dialect.Catalogue, names map[string]string) {
	t.Helper()
	ctx := context.Background()
	cols, err := ddlgolden.QueryColumns(c.QueryColumns, ddlgolden.ExampleFields)
	if err != nil {
		t.Fatal(err)
	}
	names["query_columns"] = cols
	exists := dialect.Compile(c.QueryColumns.IndexExists, dialect.PlaceholderQuestion)
	for run := 1; run <= 2; run++ {
		created := 0
		for _, s := range c.Scripts {
			for i, st := range s.Statements {
				filled, err := dialect.Fill(st, names)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, filled); err != nil {
					t.Fatalf("run %d, %s statement %d: %v\n%s", run, s.Name, i+1, err, filled)
				}
			}
			if s.Name != dialect.ScriptQueryTable {
				continue
			}
			idx, err := ddlgolden.IndexStatements(c.QueryColumns, ddlgolden.ExampleFields, names)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range ddlgolden.ExampleFields {
				index := "idx_" + names["query_table"] + "_" + f.Column
				args, _ := exists.Args(map[string]any{"table": names["query_table"], "index": index})
				rows, err := db.QueryContext(ctx, exists.SQL, args...)
				if err != nil {
					t.Fatalf("IndexExists: %v", err)
				}
				found := rows.Next()
				rows.Close()
				if found {
					continue
				}
				if _, err := db.ExecContext(ctx, idx[i]); err != nil {
					t.Fatalf("run %d: %v\n%s", run, err, idx[i])
				}
				created++
			}
		}
		if want := map[int]int{1: 2, 2: 0}[run]; created != want {
			t.Errorf("run %d created %d query-table indexes, want %d", run, created, want)
		}
	}
}

// checkFourByteUTF8 stores an emoji in payloads and keys (an exact-compare
// key, a plain VARCHAR key and an event-store aggregate id) and reads it back.
func checkFourByteUTF8(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	const s = "konto-😀-Ω"
	if _, err := db.ExecContext(ctx, `INSERT INTO account_event
(id, aggregate_id, aggregate_type, sequence_no, event_type, payload, partition_key, global_position)
VALUES ('00000000-0000-7000-8000-000000000001', ?, 'A', 0, 'E', ?, 0, 1)`, s, `{"k":"`+s+`"}`); err != nil {
		t.Fatalf("insert 4-byte UTF-8 event: %v", err)
	}
	var agg, payload string
	if err := db.QueryRowContext(ctx, "SELECT aggregate_id, payload FROM account_event WHERE aggregate_id = ?", s).Scan(&agg, &payload); err != nil {
		t.Fatal(err)
	}
	if agg != s || payload != `{"k":"`+s+`"}` {
		t.Errorf("event read back %q / %q", agg, payload)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO READ_MODEL_CAPTURE_RECORDS
(id, topic, topic_position, partition_key, read_model_key, read_model_type, payload, cascade_depth, deleted, occurred_at)
VALUES ('00000000-0000-7000-8000-000000000002', ?, 1, 0, ?, 'T', ?, 1, FALSE, UTC_TIMESTAMP(6))`, s, s, s); err != nil {
		t.Fatalf("insert 4-byte UTF-8 read-model message: %v", err)
	}
	var topic, key, rm string
	if err := db.QueryRowContext(ctx, "SELECT topic, read_model_key, payload FROM READ_MODEL_CAPTURE_RECORDS WHERE read_model_key = ?", s).Scan(&topic, &key, &rm); err != nil {
		t.Fatal(err)
	}
	if topic != s || key != s || rm != s {
		t.Errorf("read-model message read back %q / %q / %q", topic, key, rm)
	}
	// The exact-compare key tells case apart; the unique key of the
	// consumers' names sees 4-byte characters.
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM READ_MODEL_CAPTURE_RECORDS WHERE read_model_key = ?", "KONTO-😀-Ω").Scan(&n); err != nil || n != 0 {
		t.Errorf("read_model_key compared case-insensitively (n=%d, err=%v)", n, err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO CONSUMERS (id, consumer_type, consumer_name, state_since)
VALUES ('00000000-0000-7000-8000-000000000003', 'projection', ?, UTC_TIMESTAMP(6))`, s); err != nil {
		t.Fatalf("insert 4-byte UTF-8 consumer name: %v", err)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SELECT consumer_name FROM CONSUMERS").Scan(&name); err != nil || name != s {
		t.Errorf("consumer name read back %q (%v)", name, err)
	}
}

// checkIntrospection runs the catalogue's introspection queries on the
// example query table.
func checkIntrospection(t *testing.T, db *sql.DB, in dialect.Introspection) {
	t.Helper()
	ctx := context.Background()
	run := func(q string, table string) *sql.Rows {
		c := dialect.Compile(q, dialect.PlaceholderQuestion)
		args, err := c.Args(map[string]any{"table": table})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, c.SQL, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, c.SQL)
		}
		return rows
	}
	rows := run(in.TableExists, "account_summary")
	if !rows.Next() {
		t.Error("TableExists: no row for account_summary")
	}
	rows.Close()
	rows = run(in.TableExists, "no_such_table")
	if rows.Next() {
		t.Error("TableExists: a row for no_such_table")
	}
	rows.Close()

	type column struct {
		typ              string
		length, prec, sc sql.NullInt64
		nullable         bool
	}
	got := map[string]column{}
	rows = run(in.Columns, "account_summary")
	for rows.Next() {
		var name string
		var c column
		if err := rows.Scan(&name, &c.typ, &c.length, &c.prec, &c.sc, &c.nullable); err != nil {
			t.Fatal(err)
		}
		got[name] = c
	}
	rows.Close()
	if c := got["read_model_id"]; c.typ != "VARCHAR" || c.length.Int64 != 255 || c.nullable {
		t.Errorf("read_model_id: %+v", c)
	}
	if c := got["balance"]; c.typ != "DECIMAL" || c.prec.Int64 != 38 || c.sc.Int64 != 10 || !c.nullable {
		t.Errorf("balance: %+v", c)
	}
	rows = run(in.Columns, "READ_MODEL_CAPTURE_RECORDS")
	for rows.Next() {
		var name string
		var c column
		if err := rows.Scan(&name, &c.typ, &c.length, &c.prec, &c.sc, &c.nullable); err != nil {
			t.Fatal(err)
		}
		if name == "occurred_at" && (c.typ != "DATETIME" || c.sc.Int64 != 6) {
			t.Errorf("occurred_at: %+v (want DATETIME, scale 6 fractional digits)", c)
		}
	}
	rows.Close()

	idx := map[string]string{}
	rows = run(in.Indexes, "account_summary")
	for rows.Next() {
		var index, col string
		var unique bool
		var ord int
		if err := rows.Scan(&index, &col, &unique, &ord); err != nil {
			t.Fatal(err)
		}
		idx[index] = col
		if (index == "PRIMARY" || index == "idx_account_summary_iban") != unique {
			t.Errorf("index %s unique=%v", index, unique)
		}
	}
	rows.Close()
	for _, want := range []string{"PRIMARY", "idx_account_summary_iban", "idx_account_summary_balance"} {
		if _, ok := idx[want]; !ok {
			t.Errorf("Indexes: %s missing (got %v)", want, idx)
		}
	}
}
