// Package h2 is Tidemark's H2 dialect: the spec's H2 2.1 DDL, the COUNTER_ROW
// position strategy and H2's error codes. It describes; the core executes.
//
// H2 is reached from Go through the JDBC bridge (package jdbcbridge, driver
// name "jdbcbridge"), so DSNs have the form
//
//	jdbcbridge://127.0.0.1:PORT?url=<url-escaped JDBC URL>&user=app
//
// The bridge serves in-memory databases by default, as a user without admin
// rights that owns its schema (the DSN's user; Tidemark's DDL needs no more).
// A file database such as the DSNHint's must be allowed on the bridge by its
// directory (--allow-url-prefix jdbc:h2:file:./), created through the
// bridge's admin path (Server --create-database URL --user app), and opened
// as that user, who has no admin rights there. See docs/jdbc-bridge.md.
//
// # Lock timeout
//
// Appends queue on the counter row of the global position table: each holds
// it from allocation to commit. H2 2.1's default lock timeout (about 4 s,
// then HYT00 / 50200) is too short once many writers queue, so the JDBC URL
// should raise it, e.g.
//
//	jdbc:h2:file:./tidemark;LOCK_TIMEOUT=60000
//
// The dialect's DSNHint and the conformance harness use 60000 ms. A waiting
// append that reaches the timeout fails with ErrLockTimeout's rule.
//
// # Positions
//
// PositionAllocate increments and returns the counter in one statement,
// SELECT val FROM FINAL TABLE (UPDATE …): the UPDATE takes the row lock,
// which H2 holds until the transaction ends, so positions are handed out in
// commit order and a rollback restores them. H2 2.1 has no SKIP LOCKED and
// ignores NOWAIT.
//
// # Seeds and concurrent first starts
//
// The seeds (counter rows, PARTITION_METADATA, the high-water-mark row) are
// MERGE … WHEN NOT MATCHED THEN INSERT, which never overwrites a row. In its
// default mode H2 has no insert-if-missing that is safe against a concurrent
// insert of the same key (ON CONFLICT and INSERT IGNORE need compatibility
// modes), so when several processes seed an empty database at the same
// instant one of them can fail with a unique violation (measured: 8
// concurrent seeders, 7 of 20 rounds); started again, it finds the row.
// Once a database is initialised, starts are unaffected.
//
// # Files
//
// The catalogue is dialect.ANSI() plus H2's differences, one file an area:
// h2.go the identity and the assembly, ddl*.go the scripts, statements.go
// the statements, errors.go the error rules, introspection.go the catalogue
// queries.
package h2

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// LockTimeoutMillis is the LOCK_TIMEOUT the DSN hint and the conformance
// harness put in H2 JDBC URLs.
const LockTimeoutMillis = 60000

// H2 is the H2 dialect.
type H2 struct{ dialect.Base }

var _ dialect.Dialect = (*H2)(nil)

// New returns the H2 dialect.
func New() *H2 { return &H2{dialect.Base{Catalogue: Catalogue()}} }

// now is the database clock. CURRENT_TIMESTAMP is TIMESTAMP WITH TIME ZONE
// and, in H2, fixed for the duration of a transaction; every statement that
// uses it runs in a transaction of its own.
const now = `CURRENT_TIMESTAMP`

// DSNHint is an example jdbcbridge DSN for a file database with the lock
// timeout this dialect expects (url is jdbc:h2:file:./tidemark;LOCK_TIMEOUT=60000).
const DSNHint = "jdbcbridge://127.0.0.1:4242?url=jdbc%3Ah2%3Afile%3A.%2Ftidemark%3BLOCK_TIMEOUT%3D60000&user=app"

// Catalogue is the H2 catalogue: ANSI's with H2's identity, DDL, error
// codes, MERGE seeds, FINAL TABLE counter, TIMESTAMPADD leases and
// INFORMATION_SCHEMA.INDEX_COLUMNS.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()
	c.Identity.Name = "h2"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "H2 2.1 (2.1.214 tested), default mode"
	c.Identity.DriverName = "jdbcbridge"
	c.Identity.Drivers = []string{"jdbcbridge"}
	c.Identity.DSNHint = DSNHint
	c.Identity.MaxIdentifierLength = 256
	c.Identity.StatementTerminator = ";" // no statement has a procedural body
	// TIMESTAMP keeps 6 digits by default; DECIMAL goes to 100000 digits.
	// VARCHAR counts UTF-16 code units (Java strings): aggregate_id is
	// VARCHAR(510) so 255 characters fit; other VARCHAR(255) columns hold
	// 127 characters beyond U+FFFF, and the core refuses more before SQL.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 100000,
		TextUnit: dialect.TextUTF16, AggregateIDLength: 510}

	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Statements = statements()
	c.Locks.Now = now
	c.Errors = errorRules()
	// Unquoted names are folded to upper case; index and constraint
	// names are unique in the schema, apart from table names. H2 has no
	// named lock: concurrent creations that meet "already exists" are
	// treated as done (ErrDuplicateObject) and the schema re-verified.
	c.Naming = dialect.Naming{IndexScope: dialect.IndexScopeSchema, ReservedWords: reservedWords}
	c.Introspection = introspection()
	return c
}

// reservedWords are the 89 words H2 2.1 refuses as a table or column name:
// of its documented keyword list and the SQL standard's reserved words,
// those it refuses when creating a table and a column of each name (the
// conformance suite's TIDEMARK_PROBE_WORDS mode).
var reservedWords = strings.Fields(`
ALL AND ANY ARRAY AS ASYMMETRIC AUTHORIZATION BETWEEN CASE CAST CHECK CONSTRAINT CROSS
CURRENT_CATALOG CURRENT_DATE CURRENT_PATH CURRENT_ROLE CURRENT_SCHEMA CURRENT_TIME CURRENT_TIMESTAMP
CURRENT_USER DAY DEFAULT DISTINCT ELSE END EXCEPT EXISTS FALSE FETCH FOR FOREIGN FROM FULL GROUP
HAVING HOUR IF IN INNER INTERSECT INTERVAL IS JOIN KEY LEFT LIKE LIMIT LOCALTIME LOCALTIMESTAMP
MINUS MINUTE MONTH NATURAL NOT NULL OFFSET ON OR ORDER PRIMARY QUALIFY RIGHT ROW ROWNUM SECOND
SELECT SESSION_USER SET SOME SYMMETRIC SYSTEM_USER TABLE TO TRUE UESCAPE UNION UNIQUE UNKNOWN USER
USING VALUE VALUES WHEN WHERE WINDOW WITH YEAR _ROWID_
`)
