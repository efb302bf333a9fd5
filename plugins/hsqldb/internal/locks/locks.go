// Package locks is a test-only variant of the HSQLDB dialect for HSQLDB in
// LOCKS transaction control (hsqldb.tx=locks, the engine's default): a
// locking engine, whose reads wait for writers. It declares that fact and
// reads a refused append's version in its own transaction; and it keeps a
// time of day to the second while timestamps keep microseconds (a TIME
// precision apart from TIMESTAMP's, as some engines have); and its
// aggregate_id keeps the spec's VARCHAR(255), counted in UTF-16 code units.
// Nothing else
// differs from the MVCC dialect. The conformance suite runs whole on it
// (locks_test.go), as it would on a third party's locking engine.
package locks

import (
	"maps"
	"slices"
	"strings"

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
	// Like engines that count VARCHAR in UTF-16 code units and keep the
	// spec's VARCHAR(255) for aggregate_id: 127 characters beyond U+FFFF
	// fit, and the core refuses more before SQL (the suite sizes its keys).
	c.Scripts = slices.Clone(c.Scripts)
	for i := range c.Scripts {
		sc := &c.Scripts[i]
		sc.Statements = slices.Clone(sc.Statements)
		for j, st := range sc.Statements {
			sc.Statements[j] = strings.ReplaceAll(st, "VARCHAR(510)", "VARCHAR(255)")
		}
	}
	c.Facts.AggregateIDLength = 0
	c.QueryColumns.Types = maps.Clone(c.QueryColumns.Types)
	c.QueryColumns.Types[dialect.KindTime] = "TIME(0)"
	c.Facts.TimeDigits = dialect.Digits(0)
	return c
}

// New is the variant as a dialect.
func New() dialect.Dialect { return &dialect.Base{Catalogue: Catalogue()} }
