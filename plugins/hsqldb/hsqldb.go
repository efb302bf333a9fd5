// Package hsqldb is Tidemark's HSQLDB dialect: the spec's HSQLDB 2.7 DDL, the
// COUNTER_ROW position strategy and HSQLDB's error codes. It describes; the
// core executes.
//
// HSQLDB is reached from Go through the JDBC bridge (package jdbcbridge,
// driver name "jdbcbridge"), so DSNs have the form
//
//	jdbcbridge://127.0.0.1:PORT?url=<url-escaped JDBC URL>&user=app
//
// The bridge serves in-memory databases by default, as a user without admin
// rights that owns its schema (the DSN's user; Tidemark's DDL needs no more).
// A file database such as the DSNHint's must be allowed on the bridge by its
// directory (--allow-url-prefix jdbc:hsqldb:file:./), created through the
// bridge's admin path (Server --create-database URL --user app), and opened
// as that user, who has no admin rights there. See docs/jdbc-bridge.md.
//
// The database must run in MVCC mode: put ;hsqldb.tx=mvcc in the JDBC URL
// when the database is created (or run SET DATABASE TRANSACTION CONTROL
// MVCC). In the default LOCKS mode a plain read waits for every writer and
// ignores cancellation; in MVCC mode reads never wait for writers (measured
// at every isolation level with row locks held and a writer blocked).
//
// An in-memory database keeps its CLOBs (every payload) in the heap, in
// blocks of hsqldb.lob_file_scale KiB: 32 by default, so each event took at
// least 32 KiB. The bridge creates jdbc:hsqldb:mem: databases with
// hsqldb.lob_file_scale=1 unless the URL sets it; set it yourself when
// creating one elsewhere.
//
// # Positions
//
// In MVCC mode SELECT … FOR UPDATE does not block another SELECT … FOR
// UPDATE (the second one reads the old value), so it cannot serialise
// appends. PositionAllocate therefore locks the counter row with an UPDATE,
// which does wait for the holder and then reads the committed value, and
// PositionAllocated reads back what this transaction wrote. HSQLDB has no
// SKIP LOCKED and no NOWAIT, and no lock timeout: a waiting append waits
// until the holder ends or its context is cancelled (MVCC mode aborts the
// wait, 40502).
//
// # Errors
//
// HSQLDB ends a transaction it cannot serialise, a deadlock included, with
// 40001 "transaction rollback: serialization failure" (−4861), classified
// as a serialization failure. A missing table and a missing column are the
// same error (42501, −5501 "user lacks privilege or object not found"), so
// both classify as an undefined table.
//
// # Files
//
// The catalogue is dialect.ANSI() plus HSQLDB's differences, one file an
// area: hsqldb.go the identity and the assembly, ddl*.go the scripts,
// statements.go the statements, errors.go the error rules,
// introspection.go the catalogue queries.
package hsqldb

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// HSQLDB is the HSQLDB dialect.
type HSQLDB struct{ dialect.Base }

var _ dialect.Dialect = (*HSQLDB)(nil)

// New returns the HSQLDB dialect.
func New() *HSQLDB { return &HSQLDB{dialect.Base{Catalogue: Catalogue()}} }

// now is the database clock: TIMESTAMP WITH TIME ZONE, fixed per statement.
const now = `CURRENT_TIMESTAMP`

// DSNHint is an example jdbcbridge DSN for a file database in MVCC mode (url
// is jdbc:hsqldb:file:./tidemark;hsqldb.tx=mvcc).
const DSNHint = "jdbcbridge://127.0.0.1:4242?url=jdbc%3Ahsqldb%3Afile%3A.%2Ftidemark%3Bhsqldb.tx%3Dmvcc&user=app"

// Catalogue is the HSQLDB catalogue: ANSI's with HSQLDB's identity, DDL,
// error codes, TIMESTAMPADD leases and INFORMATION_SCHEMA.SYSTEM_* queries.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()
	c.Identity.Name = "hsqldb"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "HSQLDB 2.7 (2.7.1 tested) in MVCC mode (hsqldb.tx=mvcc)"
	c.Identity.DriverName = "jdbcbridge"
	c.Identity.Drivers = []string{"jdbcbridge"}
	c.Identity.DSNHint = DSNHint
	c.Identity.StatementTerminator = ";" // no statement has a procedural body
	// TIMESTAMP keeps 6 digits by default; 38 decimal digits are the
	// most the core asks for (HSQLDB holds more).
	// VARCHAR counts UTF-16 code units (Java strings): aggregate_id is
	// VARCHAR(510) so 255 characters fit; other VARCHAR(255) columns hold
	// 127 characters beyond U+FFFF, and the core refuses more before SQL.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 38,
		TextUnit: dialect.TextUTF16, AggregateIDLength: 510}

	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Statements = statements()
	// No ForUpdate: in MVCC mode it does not lock against another
	// SELECT … FOR UPDATE; rows are locked by updating them.
	c.Locks = dialect.LockForms{Now: now}
	c.PositionSettings.AllocateFirst = true
	c.Errors = errorRules()
	// Unquoted names are folded to upper case; index and constraint
	// names are unique in the schema, apart from table names. No named
	// lock: concurrent "already exists" is treated as done.
	c.Naming = dialect.Naming{IndexScope: dialect.IndexScopeSchema, ReservedWords: reservedWords}
	c.Checks = []dialect.EngineCheck{noPad}
	c.Introspection = introspection()
	return c
}

// reservedWords are the 73 words HSQLDB 2.7 (default settings) refuses as a
// table or column name: of the SQL standard's reserved words and H2's and
// SQLite's keywords, those it refuses when creating a table and a column of
// each name (the conformance suite's TIDEMARK_PROBE_WORDS mode).
var reservedWords = strings.Fields(`
ALL AND ANY AS AT BETWEEN BOTH BY CALL CASE CAST CHECK COALESCE CONSTRAINT CONVERT CORRESPONDING
CREATE CROSS CUBE DEFAULT DISTINCT DO DROP ELSE EVERY EXCEPT EXISTS FETCH FOR FOREIGN FROM FULL
GRANT GROUP GROUPING HAVING IN INNER INTERSECT INTO IS JOIN LEADING LEFT LIKE NATURAL NOT NULLIF ON
OR ORDER OUTER PRIMARY REFERENCES RIGHT ROLLUP SELECT SET SOME SUM TABLE THEN TO TRAILING TRIGGER
UNION UNIQUE USING VALUES WHEN WHERE WITH _ROWID_
`)
