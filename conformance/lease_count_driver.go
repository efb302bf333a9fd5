package conformance

import (
	"context"
	"database/sql"
	"sync/atomic"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
)

// countingDB opens a *sql.DB on env's database whose driver counts every
// statement the database runs (internal/sqlcount: an Exec or Query on a
// connection or a prepared statement; a prepare and transaction control
// are not in the count returned). The engine has no statement hook; the
// driver is the one place every statement passes.
func countingDB(t T, env *Env) (*sql.DB, *atomic.Int64) {
	t.Helper()
	c := &sqlcount.Counts{}
	db, err := sqlcount.Open(env.Driver, env.DSN, c)
	if err != nil {
		t.Fatalf("counting driver: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, &c.Statements
}

// countedEngine creates cfg's schema uncounted, then opens an engine on
// cfg through a driver that counts into counts (closed when the test
// ends): what a test of the statements an operation costs starts from.
func countedEngine(t T, env *Env, cfg engine.Config, counts *sqlcount.Counts) *engine.Engine {
	t.Helper()
	openEngine(t, env, cfg)
	db, err := sqlcount.Open(env.Driver, env.DSN, counts)
	if err != nil {
		t.Fatalf("counting driver: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := engine.Open(context.Background(), db, env.Catalogue, cfg)
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
