// Package sqlite is Tidemark's embedded, zero-setup dialect. SQLite is not in
// the spec; its DDL maps the spec's tables one to one (docs/spec-deviations.md).
// Positions use a counter row; SQLite allows one writing transaction at a
// time, so writers must begin with BEGIN IMMEDIATE (modernc.org/sqlite:
// DSN parameter _txlock=immediate) to queue instead of failing.
//
// The catalogue is dialect.ANSI() plus SQLite's differences, one file an
// area: this file the identity and the assembly, ddl*.go the scripts,
// statements.go the statements, errors.go the error rules,
// introspection.go the catalogue queries.
package sqlite

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// SQLite is the SQLite dialect.
type SQLite struct{ dialect.Base }

var _ dialect.Dialect = (*SQLite)(nil)

// New returns the SQLite dialect.
func New() *SQLite { return &SQLite{dialect.Base{Catalogue: Catalogue()}} }

// now is the database clock in a fixed, lexically ordered UTC form.
const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`

// dsnParams are the DSN parameters the SQLite guarantees rely on. Without
// a busy timeout a writer meeting another connection's lock fails with
// SQLITE_BUSY at once (the advancer then fails every cycle while appends
// go on); without _txlock=immediate a transaction that reads first and
// writes later fails with SQLITE_BUSY whatever the timeout (a deferred
// BEGIN cannot wait to upgrade its read lock). WAL and foreign keys are
// the DSNHint's too, but a database file keeps WAL once set and the
// core's writes do not rely on the foreign keys.
var dsnParams = []dialect.DSNParam{
	{Name: "_pragma", Value: "busy_timeout(10000)", Match: "busy_timeout(",
		Why: "a writer meeting another connection's lock waits up to 10 s instead of failing with SQLITE_BUSY at once"},
	{Name: "_txlock", Value: "immediate",
		Why: "a transaction takes the write lock at BEGIN, so writers queue instead of failing with SQLITE_BUSY when they upgrade"},
}

// Catalogue is the SQLite catalogue.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()
	c.Identity.Name = "sqlite"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "SQLite 3.35 or later (RETURNING)"
	c.Identity.DriverName = "sqlite"
	c.Identity.Drivers = []string{"sqlite"}
	c.Identity.DSNHint = "file:tidemark.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	c.Identity.DSNParams = dsnParams
	c.Identity.Embedded = true
	c.Identity.FoldsUnquotedTo = ""      // names are stored as written
	c.Identity.StatementTerminator = ";" // no statement has a procedural body
	// The driver writes a time as text with all nine digits, whatever the
	// declared type; a DECIMAL has NUMERIC affinity and a fraction is kept
	// as a double, exact to 15 significant digits.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 9, InstantDigits: 9, MaxDecimalPrecision: 15}

	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Statements = statements()
	// SQLite locks the whole database for a writer: no row locks, so no
	// FOR UPDATE; writers begin with BEGIN IMMEDIATE (the DSN's
	// _txlock=immediate) and queue there.
	c.Locks = dialect.LockForms{Now: now, SerializesWriters: true}
	// SQLite stores names as written but compares them ignoring ASCII
	// case; tables and indexes share sqlite_master's namespace (the zero
	// Naming). DDL runs under the database write lock, so no schema lock
	// is needed.
	c.Naming.ReservedWords = reservedWords
	c.Errors = errorRules()
	c.Introspection = introspection()
	// The query columns are ANSI's. The declared types follow the spec's
	// so that introspection reads them back (SQLite keeps a column's
	// declared type verbatim); a DECIMAL column has NUMERIC affinity, so
	// the copy it holds compares with 15 significant digits while the read
	// model itself keeps the exact value.
	return c
}

// reservedWords are the 59 words SQLite refuses as a table or column
// name: of its keyword list (sqlite.org/lang_keywords.html) and the SQL
// standard's reserved words, those it does not accept as an identifier,
// found by creating a table and a column of each name (the conformance
// suite's TIDEMARK_PROBE_WORDS mode). SQLite takes most keywords as names.
var reservedWords = strings.Fields(`
ADD ALL ALTER AND AS AUTOINCREMENT BETWEEN CASE CHECK COLLATE COMMIT CONSTRAINT CREATE DEFAULT
DEFERRABLE DELETE DISTINCT DROP ELSE ESCAPE EXCEPT EXISTS FOREIGN FROM GROUP HAVING IF IN INDEX
INSERT INTERSECT INTO IS ISNULL JOIN LIMIT NOT NOTHING NOTNULL NULL ON OR ORDER PRIMARY REFERENCES
RETURNING SELECT SET TABLE THEN TO TRANSACTION UNION UNIQUE UPDATE USING VALUES WHEN WHERE
`)
