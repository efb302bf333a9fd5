package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	sqliteplugin "github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// openSQLite binds the SQLite catalogue (in process: no plugin is needed to
// test the engine's entry points) to a real embedded database.
func openSQLite(t *testing.T) *engine.Engine {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "e.db") + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := engine.Open(context.Background(), db, sqliteplugin.Catalogue(), engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// snapshot binds a snapshot of aggregate "a-"+id, so two of them collide
// only on the primary key.
func snapshot(id string, payload any) map[string]any {
	return map[string]any{"id": id, "aggregate_id": "a-" + id, "aggregate_type": "t", "sequence_no": 1,
		"snapshot_version": 1, "payload": payload, "created_at": time.Unix(0, 0).UTC()}
}

// checkClassified asserts the error is classified and still the driver's.
func checkClassified(t *testing.T, e *engine.Engine, err error, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: errors.Is(%v, %v) is false (%T)", what, err, want, err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		t.Errorf("%s: the driver's *sqlite.Error is unreachable from %T", what, err)
	}
	if again := e.Errors.Wrap(err); again != err {
		t.Errorf("%s: wrapping twice made a new error", what)
	}
}

// TestEntryPointsClassify runs each entry point on each kind of Querier
// (the prepared path on the engine's *sql.DB and on a *sql.Tx, the text path
// on a *sql.Conn) and checks the errors they return.
func TestEntryPointsClassify(t *testing.T) {
	e := openSQLite(t)
	ctx := context.Background()
	if _, err := e.Exec(ctx, e.DB, dialect.SnapshotInsert, nil, snapshot("s1", `{}`)); err != nil {
		t.Fatal(err)
	}
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	queriers := map[string]func(t *testing.T) (engine.Querier, func()){
		"db":   func(*testing.T) (engine.Querier, func()) { return e.DB, func() {} },
		"conn": func(*testing.T) (engine.Querier, func()) { return conn, func() {} },
		"tx": func(t *testing.T) (engine.Querier, func()) {
			tx, err := e.DB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return tx, func() { _ = tx.Rollback() }
		},
	}
	for name, open := range queriers {
		t.Run(name, func(t *testing.T) {
			q, done := open(t)
			defer done()
			dup := snapshot("s1", `{}`)
			dup["aggregate_id"] = "another"
			_, err := e.Exec(ctx, q, dialect.SnapshotInsert, nil, dup)
			checkClassified(t, e, err, sqlerr.ErrDuplicateEvent, "Exec, same primary key")
			if !errors.Is(err, sqlerr.ErrUniqueViolation) || sqlerr.IsTransient(err) {
				t.Errorf("a duplicate id is a unique violation and not transient: %v", err)
			}
			_, err = e.Exec(ctx, q, dialect.SnapshotInsert, nil, snapshot("s2", nil))
			checkClassified(t, e, err, sqlerr.ErrNotNullViolation, "Exec, NULL payload")
			_, err = e.ExecText(ctx, q, `INSERT INTO ${consumer_checkpoints_table} (consumer_id, source_name, partition_no) VALUES (#{c}, 's', 0)`, nil, map[string]any{"c": "none"})
			checkClassified(t, e, err, sqlerr.ErrForeignKeyViolation, "ExecText, missing parent")
			// No row is not an error to classify.
			var seq int64
			var payload string
			var at any
			err = e.QueryRow(ctx, q, dialect.SnapshotLatest, nil, map[string]any{"aggregate_id": "none", "aggregate_type": "t", "snapshot_version": 1}).Scan(&seq, &payload, &at)
			var se *sqlerr.Error
			if !errors.Is(err, sql.ErrNoRows) || errors.As(err, &se) {
				t.Errorf("QueryRow with no row: %v (%T), want sql.ErrNoRows as it is", err, err)
			}
		})
	}
	// A missing table: the errors of Query and QueryRow.
	if _, err := e.DB.Exec(`DROP TABLE AGGREGATE_SNAPSHOTS`); err != nil {
		t.Fatal(err)
	}
	_, err = e.Query(ctx, e.DB, dialect.SnapshotLatest, nil, map[string]any{"aggregate_id": "a", "aggregate_type": "t", "snapshot_version": 1})
	checkClassified(t, e, err, sqlerr.ErrUndefinedTable, "Query on a dropped table")
	var n int64
	err = e.QueryRow(ctx, conn, dialect.SnapshotLatest, nil, map[string]any{"aggregate_id": "a", "aggregate_type": "t", "snapshot_version": 1}).Scan(&n)
	checkClassified(t, e, err, sqlerr.ErrUndefinedTable, "QueryRow on a dropped table")
}

// TestContextErrorsStayAsTheyAre: the caller's cancel is not classified.
func TestContextErrorsStayAsTheyAre(t *testing.T) {
	e := openSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Exec(ctx, e.DB, dialect.SnapshotInsert, nil, snapshot("s1", `{}`))
	var se *sqlerr.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &se) {
		t.Errorf("Exec with a canceled context: %v (%T), want context.Canceled as it is", err, err)
	}
}

// TestLockTimeoutIsTransient: SQLITE_BUSY from a real second writer.
func TestLockTimeoutIsTransient(t *testing.T) {
	e := openSQLite(t)
	ctx := context.Background()
	tx, err := e.DB.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 10`); err != nil {
		t.Fatal(err)
	}
	_, err = e.Exec(ctx, conn, dialect.SnapshotInsert, nil, snapshot("s9", `{}`))
	checkClassified(t, e, err, sqlerr.ErrLockTimeout, "a second writer")
	if !sqlerr.IsTransient(err) || !errors.Is(err, sqlerr.ErrTransient) {
		t.Errorf("a lock timeout is transient: %v", err)
	}
}
