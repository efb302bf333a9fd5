// Package postgres is Tidemark's PostgreSQL dialect: the spec's PostgreSQL
// DDL, the SEQUENCE_XID_HORIZON position strategy and PostgreSQL's error
// codes. It describes; the core executes.
//
// The catalogue is dialect.ANSI() plus PostgreSQL's differences, one file
// an area: this file the identity and the assembly, ddl*.go the scripts,
// statements.go the statements, errors.go the error rules,
// introspection.go the catalogue queries.
package postgres

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// Postgres is the PostgreSQL dialect.
type Postgres struct{ dialect.Base }

var _ dialect.Dialect = (*Postgres)(nil)

// New returns the PostgreSQL dialect.
func New() *Postgres { return &Postgres{dialect.Base{Catalogue: Catalogue()}} }

// Catalogue is the PostgreSQL catalogue.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()
	c.Identity.Name = "postgres"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "PostgreSQL 13 or later (pg_current_xact_id)"
	c.Identity.DriverName = "pgx"
	c.Identity.Drivers = []string{"pgx", "postgres"}
	c.Identity.DSNHint = "postgres://user:password@127.0.0.1:5432/db?sslmode=disable"
	c.Identity.Placeholder = dialect.PlaceholderDollar
	c.Identity.MaxIdentifierLength = 63
	c.Identity.FoldsUnquotedTo = "lower"
	c.Identity.StatementTerminator = ";" // no statement has a procedural body
	// TIMESTAMPTZ and TIMESTAMP(6) keep microseconds; NUMERIC takes a
	// precision up to 1000.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 1000}

	c.Positions = dialect.SequenceXIDHorizon
	c.Scripts = dialect.Scripts(dialect.ObjectSequence, ddl())
	c.Statements = statements()
	c.EventInsert = eventInsert()
	c.CaptureInsert = captureInsert()
	c.ReadModelInsert = readModelInsert()
	c.Locks.SkipLocked = true
	c.Locks.Now = "now()"
	c.Errors = errorRules()
	// pg_class holds tables, sequences and indexes under one namespace;
	// unquoted names are folded, so case never tells two apart (the zero
	// Naming). The advisory lock is per database, held by the session.
	c.Naming.ReservedWords = reservedWords
	c.SchemaLock = dialect.SchemaLock{
		Acquire: `SELECT pg_advisory_lock(hashtextextended(#{name}, 0))`,
		Release: `SELECT pg_advisory_unlock(hashtextextended(#{name}, 0))`,
	}
	c.Introspection = introspection()
	return c
}

// reservedWords are the 100 words PostgreSQL 15 refuses as a table or
// column name: its own pg_get_keywords() with catcode 'R' (reserved) or 'T'
// (reserved, can be a function or type name), confirmed one by one by
// creating a table and a column of that name (the conformance suite's
// TIDEMARK_PROBE_WORDS mode).
var reservedWords = strings.Fields(`
ALL ANALYSE ANALYZE AND ANY ARRAY AS ASC ASYMMETRIC AUTHORIZATION BINARY BOTH CASE CAST CHECK
COLLATE COLLATION COLUMN CONCURRENTLY CONSTRAINT CREATE CROSS CURRENT_CATALOG CURRENT_DATE
CURRENT_ROLE CURRENT_SCHEMA CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER DEFAULT DEFERRABLE DESC
DISTINCT DO ELSE END EXCEPT FALSE FETCH FOR FOREIGN FREEZE FROM FULL GRANT GROUP HAVING ILIKE IN
INITIALLY INNER INTERSECT INTO IS ISNULL JOIN LATERAL LEADING LEFT LIKE LIMIT LOCALTIME
LOCALTIMESTAMP NATURAL NOT NOTNULL NULL OFFSET ON ONLY OR ORDER OUTER OVERLAPS PLACING PRIMARY
REFERENCES RETURNING RIGHT SELECT SESSION_USER SIMILAR SOME SYMMETRIC TABLE TABLESAMPLE THEN TO
TRAILING TRUE UNION UNIQUE USER USING VARIADIC VERBOSE WHEN WHERE WINDOW WITH
`)

// oldestHolderXID is the horizon of this database (xid.oldest_holder).
// Transaction ids and snapshots are cluster-wide, so the snapshot's xmin
// waits for transactions of every database; only a transaction connected
// to this database (or prepared in it) can draw from its sequences. The
// statement takes the in-progress ids of a fresh snapshot (top-level ids,
// prepared transactions included; lazy VACUUM is left out as in xmin) and
// drops only those positively placed elsewhere: a backend of another
// database whose backend_xid is that id, or a prepared transaction of
// another database. A backend never changes database and an id is never
// reused while it runs, so such a match cannot be wrong whenever it is
// read; an id nobody can place (a backend without a database, one that
// ended meanwhile, a server that hides backend_xid) still counts.
// pg_stat_activity shows datid and backend_xid to every role (not only
// with pg_read_all_stats), checked on PostgreSQL 15; a role refused the
// views gets an error, and the core falls back to OldestRunningXID.
// Subtransactions need nothing: backend_xid and the snapshot carry the
// top-level id, which every append takes before drawing a position.
// Ids in pg_stat_activity and pg_prepared_xacts are 32-bit, the snapshot's
// 64-bit: they are matched modulo 2^32 (running ids span far less).
// With nothing left in flight the result is the snapshot's xmax, above
// every completed id, as pg_snapshot_xmin would return.
const oldestHolderXID = `WITH snap AS (SELECT pg_current_snapshot() AS s), ` +
	`owners AS (` +
	`SELECT datname, backend_xid::text::bigint AS xid32, xact_start AS since FROM pg_stat_activity WHERE backend_xid IS NOT NULL ` +
	`UNION ALL SELECT database, transaction::text::bigint, prepared FROM pg_prepared_xacts), ` +
	`oldest AS (` +
	`SELECT COALESCE(MIN(x::text::bigint), (SELECT pg_snapshot_xmax(s)::text::bigint FROM snap)) AS xid ` +
	`FROM snap, pg_snapshot_xip(snap.s) AS x ` +
	`WHERE NOT EXISTS (SELECT 1 FROM owners o WHERE o.xid32 = x::text::bigint % 4294967296 AND o.datname <> current_database())) ` +
	`SELECT oldest.xid, o.datname::text, o.since FROM oldest LEFT JOIN owners o ON o.xid32 = oldest.xid % 4294967296 LIMIT 1`
