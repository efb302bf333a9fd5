// Package locks is a test-only variant of the HSQLDB dialect for HSQLDB in
// LOCKS transaction control (hsqldb.tx=locks, the engine's default): a
// locking engine, whose reads wait for writers. It declares that fact and
// reads a refused append's version in its own transaction; and it keeps a
// time of day to the second while timestamps keep microseconds (a TIME
// precision apart from TIMESTAMP's, as some engines have). Nothing else
// differs from the MVCC dialect. The conformance suite runs whole on it
// (locks_test.go), as it would on a third party's locking engine.
package locks

import (
	"maps"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
)

// Catalogue is HSQLDB's for LOCKS transaction control.
func Catalogue() dialect.Catalogue {
	c := hsqldb.Catalogue()
	c.Identity.ServerVersions = "HSQLDB 2.7 in LOCKS mode (hsqldb.tx=locks)"
	c.Identity.DSNHint = "jdbcbridge://127.0.0.1:4242?url=jdbc%3Ahsqldb%3Afile%3A.%2Ftidemark%3Bhsqldb.tx%3Dlocks&user=app"
	c.Locks.ReadersWaitForWriters = true
	c.Locks.ConflictRead = dialect.ConflictReadInTransaction
	// Like engines whose TIME keeps fewer digits than their TIMESTAMP: a
	// time of day kept to the second (HSQLDB's TIME without a precision),
	// declared, so the core cuts what it binds and accepts the column.
	c.QueryColumns.Types = maps.Clone(c.QueryColumns.Types)
	c.QueryColumns.Types[dialect.KindTime] = "TIME(0)"
	c.Facts.TimeDigits = dialect.Digits(0)
	return c
}

// New is the variant as a dialect.
func New() dialect.Dialect { return &dialect.Base{Catalogue: Catalogue()} }
