package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	sqliteplugin "github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// openSQLiteWith binds c to a new embedded SQLite database opened with
// params.
func openSQLiteWith(t *testing.T, c dialect.Catalogue, params string) (*engine.Engine, string) {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "e.db") + "?" + params
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := engine.Open(context.Background(), db, c, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, dsn
}

const sqliteParams = "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"

func events(n int) []eventstore.Event {
	out := make([]eventstore.Event, n)
	for i := range out {
		out[i] = eventstore.Event{Type: "E", Payload: []byte(`{}`)}
	}
	return out
}

func positionsOf(t *testing.T, s *eventstore.Store) []int64 {
	t.Helper()
	got, err := s.ReadUpTo(context.Background(), 0, 1<<40, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(got))
	for i, r := range got {
		out[i] = r.GlobalPosition
	}
	return out
}

func gapless(t *testing.T, got []int64, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d events stored, want %d", len(got), n)
	}
	for i, p := range got {
		if p != int64(i+1) {
			t.Fatalf("positions %v, want 1..%d", got, n)
		}
	}
}

// TestCounterLockFirst: with the lock-first form the seam runs
// position.lock before position.allocate in the append's transaction.
// A lock statement that fails shows it runs (and that nothing is stored);
// a working one gives the usual gapless positions.
func TestCounterLockFirst(t *testing.T) {
	ctx := context.Background()
	c := sqliteplugin.Catalogue()
	c.PositionSettings.CounterLock = dialect.CounterLockFirst
	c.Statements[dialect.PositionLock] = `UPDATE ${position_table}_not_there SET val = val WHERE id = 1`
	e, _ := openSQLiteWith(t, c, sqliteParams)
	s := eventstore.New(e, nil)
	_, err := s.Append(ctx, eventstore.Stream{AggregateType: "t.A", AggregateID: "a-1", Events: events(2)})
	if err == nil || !strings.Contains(err.Error(), "locking the position counter") || !errors.Is(err, sqlerr.ErrUndefinedTable) {
		t.Fatalf("append with a failing lock statement: %v, want the lock's undefined-table error", err)
	}
	if got := positionsOf(t, s); len(got) != 0 {
		t.Fatalf("stored %v after a failed lock", got)
	}

	c.Statements[dialect.PositionLock] = `UPDATE ${position_table} SET val = val WHERE id = 1`
	e, _ = openSQLiteWith(t, c, sqliteParams)
	s = eventstore.New(e, nil)
	for i := 0; i < 3; i++ {
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "t.A", AggregateID: "a-1", Events: events(2)}); err != nil {
			t.Fatal(err)
		}
	}
	gapless(t, positionsOf(t, s), 6)
}

// TestInsertMaxRows: the single-row mode (MaxRows 1) appends a batch one
// row per statement, and the insert refuses a statement of more rows; the
// bind limit still bounds the rows where it is lower.
func TestInsertMaxRows(t *testing.T) {
	ctx := context.Background()
	c := sqliteplugin.Catalogue()
	c.EventInsert.MaxRows = 1
	e, _ := openSQLiteWith(t, c, sqliteParams)
	s := eventstore.New(e, nil)
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "t.A", AggregateID: "a-1", Events: events(5)}); err != nil {
		t.Fatal(err)
	}
	gapless(t, positionsOf(t, s), 5)

	ins := e.NewInsert("event insert", c.EventInsert, dialect.EventInsertBinds)
	shape := engine.InsertShape{Tables: map[string]string{"event_store_table": "EVENT_STORE"}, Variant: "plain"}
	if n := ins.MaxRows(shape); n != 1 {
		t.Errorf("MaxRows = %d, want 1", n)
	}
	row := make([]any, len(dialect.EventInsertBinds))
	if _, err := ins.Exec(ctx, e.DB, shape, [][]any{row, row}); err == nil || !strings.Contains(err.Error(), "2 rows in one statement") {
		t.Errorf("two rows in single-row mode: %v, want a refusal", err)
	}

	for _, tc := range []struct {
		maxRows, maxBinds, want int
	}{
		{0, 0, engine.DefaultMaxInsertRows},
		{0, 2100, 2100 / 11}, // SQL Server: 11 binds a row
		{100, 2100, 100},
		{0, 13, 1},
		{3, 0, 3},
	} {
		c := sqliteplugin.Catalogue()
		c.EventInsert.MaxRows = tc.maxRows
		c.Identity.MaxBindParameters = tc.maxBinds
		e, _ := openSQLiteWith(t, c, sqliteParams)
		if n := e.NewInsert("event insert", c.EventInsert, dialect.EventInsertBinds).MaxRows(shape); n != tc.want {
			t.Errorf("max rows %d, max binds %d: MaxRows = %d, want %d", tc.maxRows, tc.maxBinds, n, tc.want)
		}
	}
}

// TestSerializesWritersLockAtBegin: LockForms.SerializesWriters promises
// that a writing transaction holds the database's write lock from BEGIN.
// The core takes no lock itself: with the DSN the dialect's DSNHint shows
// (_txlock=immediate) the driver does, so a second writer is refused at its
// own BEGIN while the append's transaction has only begun; without it the
// same BEGIN is not refused, which is why the DSN carries it.
func TestSerializesWritersLockAtBegin(t *testing.T) {
	ctx := context.Background()
	c := sqliteplugin.Catalogue()
	if !c.Locks.SerializesWriters || !strings.Contains(c.Identity.DSNHint, "_txlock=immediate") {
		t.Fatalf("sqlite declares SerializesWriters %v with DSN hint %q", c.Locks.SerializesWriters, c.Identity.DSNHint)
	}
	for _, tc := range []struct {
		params string
		locked bool
	}{
		{sqliteParams, true},
		{strings.Replace(sqliteParams, "&_txlock=immediate", "", 1), false},
	} {
		e, dsn := openSQLiteWith(t, c, tc.params)
		tx, err := e.BeginTx(ctx, engine.OpAppend)
		if err != nil {
			t.Fatal(err)
		}
		other, err := sql.Open("sqlite", strings.SplitN(dsn, "?", 2)[0]+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE; ROLLBACK")
		other.Close()
		_ = tx.Rollback()
		if refused := err != nil; refused != tc.locked {
			t.Errorf("params %q: a second writer's BEGIN IMMEDIATE: %v; want refused %v", tc.params, err, tc.locked)
		}
	}
}

// TestInsertBindsRowsBySlot: the insert home is not the event store's own.
// On a table of its own, a first row with an expression binding one more
// parameter, and rows bound by slot name, each row gets its own values.
func TestInsertBindsRowsBySlot(t *testing.T) {
	ctx := context.Background()
	e, _ := openSQLiteWith(t, sqliteplugin.Catalogue(), sqliteParams)
	if _, err := e.DB.ExecContext(ctx, `CREATE TABLE rec (a INTEGER, b INTEGER)`); err != nil {
		t.Fatal(err)
	}
	ins := e.NewInsert("record insert", dialect.RowInsert{Head: `INSERT INTO rec (a, b) VALUES `, Row: `(#{a}, #{b})`}, []string{"c", "b", "a"})
	shape := engine.InsertShape{Variant: "first+c", FirstExprs: map[string]string{"b": "#{b} + #{c}"}}
	rows := [][]any{{100, 10, 1}, {0, 20, 2}, {0, 30, 3}} // slots: c, b, a
	if _, err := ins.Exec(ctx, e.DB, shape, rows); err != nil {
		t.Fatal(err)
	}
	got, err := e.DB.QueryContext(ctx, `SELECT a, b FROM rec ORDER BY a`)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	want := [][2]int64{{1, 110}, {2, 20}, {3, 30}}
	i := 0
	for ; got.Next(); i++ {
		var a, b int64
		if err := got.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		if i >= len(want) || [2]int64{a, b} != want[i] {
			t.Errorf("row %d: (%d, %d), want %v", i, a, b, want)
		}
	}
	if i != len(want) {
		t.Errorf("%d rows, want %d", i, len(want))
	}
}
