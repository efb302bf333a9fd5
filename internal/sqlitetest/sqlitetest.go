// Package sqlitetest opens an engine on a fresh SQLite file for the core's
// unit tests: embedded, no server. The conformance suite runs the same
// behaviour on every engine.
package sqlitetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the driver

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// Engine opens an engine with its schema on a fresh SQLite file in t's
// temporary directory (WAL, immediate transactions, a generous busy
// timeout), closed when t ends.
func Engine(t testing.TB) *engine.Engine {
	t.Helper()
	return EngineConfig(t, engine.Config{})
}

// EngineConfig is Engine opened with cfg (query tables, aggregates).
func EngineConfig(t testing.TB, cfg engine.Config) *engine.Engine {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "tidemark.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := engine.Open(context.Background(), db, sqlite.Catalogue(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
