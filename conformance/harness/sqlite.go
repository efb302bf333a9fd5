package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// sqliteParams are the modernc.org/sqlite DSN parameters. They make
// concurrent writers queue instead of failing with SQLITE_BUSY:
//
//   - _pragma=busy_timeout(10000): a connection that meets a lock retries
//     for up to 10 s (the driver runs busy_timeout before other pragmas);
//   - _pragma=journal_mode(WAL): readers do not block the writer and the
//     writer does not block readers;
//   - _txlock=immediate: BEGIN takes the write lock at once, so a
//     transaction waits on the busy handler up front rather than failing
//     with SQLITE_BUSY (which the busy handler cannot retry) when a read
//     transaction later tries to write;
//   - _pragma=foreign_keys(1): enforce FOREIGN KEY constraints like the
//     server engines do;
//   - _pragma=synchronous(NORMAL): safe with WAL and much faster for tests.
const sqliteParams = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// sqliteServer hands out new database files in one temporary directory.
type sqliteServer struct {
	dir string
	n   atomic.Int64
}

func newSQLite() (server, error) {
	dir, err := os.MkdirTemp("", "tidemark-sqlite-")
	if err != nil {
		return nil, err
	}
	markOwner(dir)
	return &sqliteServer{dir: dir}, nil
}

func (s *sqliteServer) create(ctx context.Context, driverName string) (*Database, error) {
	path := filepath.Join(s.dir, fmt.Sprintf("%s-%d.db", newDBName(), s.n.Add(1)))
	dsn := path + "?" + sqliteParams
	// Touch the database once so the WAL setting is in the file before the
	// test opens it with many connections at a time.
	if err := pingWith(ctx, "sqlite", dsn); err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	return &Database{Engine: EngineSQLite, DriverName: driverName, DSN: dsn, Source: "temp file (modernc.org/sqlite)"}, nil
}

func (s *sqliteServer) close() error { return os.RemoveAll(s.dir) }
