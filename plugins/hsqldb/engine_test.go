package hsqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// These tests run the catalogue on a real HSQLDB (MVCC mode) through the JDBC
// bridge; they skip when Java or the HSQLDB jar is missing.

var (
	bridgeOnce sync.Once
	bridge     *jdbcbridge.Server
	bridgeErr  error
	dbSeq      int
	dbSeqMu    sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bridge != nil {
		bridge.Close()
	}
	os.Exit(code)
}

// openHSQLDB returns a new in-memory HSQLDB database in MVCC mode.
func openHSQLDB(t *testing.T) *sql.DB {
	t.Helper()
	bridgeOnce.Do(func() {
		if _, _, err := jdbcbridge.FindJava(); err != nil {
			bridgeErr = err
			return
		}
		if _, err := os.Stat(jdbcbridge.HSQLDBJar()); err != nil {
			bridgeErr = err
			return
		}
		bridge, bridgeErr = jdbcbridge.StartServer(context.Background(), jdbcbridge.StartOptions{ClassPath: []string{jdbcbridge.HSQLDBJar()}})
	})
	if bridge == nil {
		t.Skipf("no JDBC bridge for HSQLDB: %v", bridgeErr)
	}
	dbSeqMu.Lock()
	dbSeq++
	name := fmt.Sprintf("hsqldbtest_%d_%d", os.Getpid(), dbSeq)
	dbSeqMu.Unlock()
	db, err := sql.Open("jdbcbridge", bridge.DSN("jdbc:hsqldb:mem:"+name+";hsqldb.tx=mvcc", "SA", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("SHUTDOWN")
		db.Close()
	})
	return db
}

// stmt fills a catalogue statement with the spec's example names and
// compiles it to '?' placeholders.
func stmt(t *testing.T, id dialect.StatementID, extra map[string]string) dialect.Compiled {
	t.Helper()
	names := ddlgolden.ExampleNames()
	for k, v := range extra {
		names[k] = v
	}
	filled, err := dialect.Fill(Catalogue().Statements[id], names)
	if err != nil {
		t.Fatal(err)
	}
	return dialect.Compile(filled, dialect.PlaceholderQuestion)
}

func createSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	stmts, _, _, err := ddlgolden.Statements(Catalogue(), "upper")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

func TestDDLIdempotentOnHSQLDB(t *testing.T) {
	db := openHSQLDB(t)
	ddlgolden.RunTwice(t, db, Catalogue(), "upper")
	if _, err := db.Exec("UPDATE EVENT_STORE_GLOBAL_POSITION SET val = 42 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	createSchema(t, db)
	var v int64
	if err := db.QueryRow("SELECT val FROM EVENT_STORE_GLOBAL_POSITION WHERE id = 1").Scan(&v); err != nil || v != 42 {
		t.Fatalf("counter after re-run: %d, %v", v, err)
	}
}

// allocate runs position.allocate (and position.allocated when the first
// returns no row) in tx and returns the new counter value.
func allocate(t *testing.T, tx *sql.Tx, n int) (int64, error) {
	pos := map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}
	var end int64
	c := stmt(t, dialect.PositionAllocate, pos)
	args, _ := c.Args(map[string]any{"count": n})
	if Catalogue().Statements[dialect.PositionAllocated] == "" {
		return end, tx.QueryRow(c.SQL, args...).Scan(&end)
	}
	if _, err := tx.Exec(c.SQL, args...); err != nil {
		return 0, err
	}
	return end, tx.QueryRow(stmt(t, dialect.PositionAllocated, pos).SQL).Scan(&end)
}

func committedEnd(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(stmt(t, dialect.CommittedEnd, map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}).SQL).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPositionAllocateHoldsTheCounter: a second allocation waits for the
// first transaction and then builds on its committed value; a plain read
// never waits and sees only committed values; a rollback restores the counter.
func TestPositionAllocateHoldsTheCounter(t *testing.T) {
	db := openHSQLDB(t)
	createSchema(t, db)
	tx1, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if end, err := allocate(t, tx1, 5); err != nil || end != 5 {
		t.Fatalf("first allocation: %d, %v", end, err)
	}
	if v := committedEnd(t, db); v != 0 {
		t.Fatalf("committed end while the append is open: %d, want 0", v)
	}
	type result struct {
		end int64
		err error
	}
	second := make(chan result, 1)
	go func() {
		tx2, err := db.Begin()
		if err != nil {
			second <- result{err: err}
			return
		}
		end, err := allocate(t, tx2, 3)
		if err == nil {
			err = tx2.Commit()
		} else {
			_ = tx2.Rollback()
		}
		second <- result{end, err}
	}()
	if err := tx1.Commit(); err != nil {
		t.Fatal(err)
	}
	// If the second allocation had not waited for the first, it would have
	// returned 3 (or failed); waiting, it adds to the committed 5.
	if r := <-second; r.err != nil || r.end != 8 {
		t.Fatalf("second allocation: %d, %v; want 8", r.end, r.err)
	}
	tx3, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if end, err := allocate(t, tx3, 2); err != nil || end != 10 {
		t.Fatalf("third allocation: %d, %v", end, err)
	}
	if err := tx3.Rollback(); err != nil {
		t.Fatal(err)
	}
	if v := committedEnd(t, db); v != 8 {
		t.Fatalf("committed end after rollback: %d, want 8", v)
	}
}

// TestErrorRules classifies errors raised by the real engine.
func TestErrorRules(t *testing.T) {
	db := openHSQLDB(t)
	createSchema(t, db)
	cl, err := sqlerr.NewClassifier(Catalogue().Errors)
	if err != nil {
		t.Fatal(err)
	}
	ins := Catalogue().EventInsert
	filled, err := dialect.Fill(ins.Head+ins.Row+ins.Tail, ddlgolden.ExampleNames())
	if err != nil {
		t.Fatal(err)
	}
	insert := dialect.Compile(filled, dialect.PlaceholderQuestion)
	row := func(id string, seq int64) []any {
		a, err := insert.Args(map[string]any{"id": id, "aggregate_id": "acc-1", "aggregate_type": "bank.Account",
			"sequence_no": seq, "event_type": "Opened", "event_revision": 0, "payload": `{}`, "metadata": nil,
			"occurred_at": "2026-01-01 00:00:00", "partition_key": 1, "global_position": seq + 1})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	const id1, id2 = "0190a0a0-0000-7000-8000-000000000001", "0190a0a0-0000-7000-8000-000000000002"
	if _, err := db.Exec(insert.SQL, row(id1, 0)...); err != nil {
		t.Fatal(err)
	}
	type errCase struct {
		name string
		err  error
		want dialect.ErrorClass
	}
	var cases []errCase
	_, err = db.Exec(insert.SQL, row(id1, 1)...)
	cases = append(cases, errCase{"same event id", err, dialect.ErrDuplicateEventID})
	_, err = db.Exec(insert.SQL, row(id2, 0)...)
	cases = append(cases, errCase{"same aggregate and sequence", err, dialect.ErrUniqueViolation})
	_, err = db.Exec(`INSERT INTO CONSUMER_CHECKPOINTS (consumer_id, source_name, partition_no) VALUES ('nope', 's', 0)`)
	cases = append(cases, errCase{"missing consumer", err, dialect.ErrForeignKeyViolation})
	_, err = db.Exec(`SELECT * FROM NO_SUCH_TABLE`)
	cases = append(cases, errCase{"missing table", err, dialect.ErrUndefinedTable})
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var je *jdbcbridge.Error
		if !errors.As(c.err, &je) {
			t.Errorf("%s: %T %v", c.name, c.err, c.err)
		}
		if got := cl.Classify(c.err); got != c.want {
			t.Errorf("%s: classified %q, want %q (%v)", c.name, got, c.want, c.err)
		}
	}
}
