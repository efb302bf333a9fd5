// Package mydialect is a worked example of a third-party Tidemark dialect
// built on dialect.ANSI(): H2 2.1 "in ANSI clothes". It starts from the ANSI
// catalogue, names itself, brings its DDL, and overrides only what H2 does
// differently from the standard. docs/writing-a-dialect.md walks through it.
//
// It is served by cmd/tidemark-dialect-mydialect and tested, out of process
// and on a real H2 database, by the conformance suite in mydialect_test.go.
package mydialect

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/h2"
	"maps"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// New returns the dialect, ready for plugin.Serve.
func New() *dialect.Base { return &dialect.Base{Catalogue: Catalogue()} }

// Catalogue is dialect.ANSI() with H2's identity, DDL and differences.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()

	// 1. Identity: who we are and how to reach the database. H2 is reached
	// from Go through the JDBC bridge (driver "jdbcbridge").
	c.Identity.Name = "mydialect"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "H2 2.1 (2.1.214 tested), default mode"
	c.Identity.DriverName = "jdbcbridge"
	c.Identity.Drivers = []string{"jdbcbridge"}
	c.Identity.DSNHint = h2.DSNHint
	c.Identity.MaxIdentifierLength = 256 // H2's limit; the standard's 128 would also work

	// 2. DDL. A real third party copies a reference plugin's DDL (or the
	// output of `tidemark schema --dialect h2 --format template`) into its
	// own package; this example borrows H2's to stay short.
	c.Scripts = h2.Catalogue().Scripts

	// 3. Error rules the standard cannot express, in front of ANSI's
	// (first match wins). H2 reports every unique violation as 23505 and
	// names the violated index first: an event table's primary key is
	// PRIMARY_KEY_n (or "PRIMARY KEY" for a row-id key), the UNIQUE
	// (aggregate_id, sequence_no) constraint CONSTRAINT_INDEX_n. Matching the
	// words "primary key" would be wrong: H2's message for both begins
	// "Unique index or primary key violation".
	//
	// The other rules are H2's own codes (org.h2.api.ErrorCode): a missing
	// parent row is 23506, not the standard 23503; 40001 is H2's deadlock;
	// a lock wait that reaches LOCK_TIMEOUT is HYT00 (50200).
	c.Errors = append([]dialect.ErrorRule{
		{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: `^(?:[^" ]*\.)?PRIMARY(?:_KEY_[0-9A-Z]*| KEY)$`},
		{Class: dialect.ErrForeignKeyViolation, SQLState: "23506"},
		{Class: dialect.ErrDeadlock, SQLState: "40001"},
		{Class: dialect.ErrLockTimeout, SQLState: "HYT00"},
		{Class: dialect.ErrSerializationFailure, VendorCode: 90131}, // concurrent update
		{Class: dialect.ErrConnectionLost, VendorCode: 90067},       // connection broken
		{Class: dialect.ErrConnectionLost, VendorCode: 90098},       // database is closed
	}, c.Errors...)

	// 4. Introspection: the standard has no view of indexes; H2 2.1 has
	// INFORMATION_SCHEMA.INDEX_COLUMNS, which lists the indexes backing
	// primary keys and unique constraints too.
	c.Introspection.Indexes = `SELECT INDEX_NAME, COLUMN_NAME, IS_UNIQUE, ORDINAL_POSITION AS ORDINAL
FROM INFORMATION_SCHEMA.INDEX_COLUMNS
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table}
ORDER BY INDEX_NAME, ORDINAL_POSITION`

	// 5. Optional: the ANSI counter is two statements (UPDATE, then SELECT
	// of the new value), which H2 runs correctly as they are. H2 can do it
	// in one round trip: FINAL TABLE returns what the UPDATE wrote, and the
	// UPDATE's row lock is held until the transaction ends, exactly as
	// before. Without PositionAllocated the core reads the value from
	// PositionAllocate's row.
	c.Statements[dialect.PositionAllocate] = `SELECT val FROM FINAL TABLE (UPDATE ${position_table} SET val = val + #{count} WHERE id = 1)`
	delete(c.Statements, dialect.PositionAllocated)

	// 6. Naming: how H2 compares names (folded to upper case, index names
	// unique in the schema apart from tables) and the words it refuses as
	// names, which are not the standard's list (H2 takes some of those and
	// refuses ROWNUM, LIMIT, …). Borrowed like the DDL; the conformance tests
	// schema/naming_rules_declared and schema/naming_reserved_words_declared
	// check both on the engine. H2 has no named lock (SchemaLock stays
	// empty): a concurrent creation's "already exists" is treated as done,
	// which needs H2's codes for it beyond the standard's 42S01 and 42S11.
	c.Naming = h2.Catalogue().Naming
	c.Errors = append(c.Errors,
		dialect.ErrorRule{Class: dialect.ErrDuplicateObject, VendorCode: 90045}, // constraint exists
		dialect.ErrorRule{Class: dialect.ErrDuplicateObject, VendorCode: 90035}, // sequence exists
		dialect.ErrorRule{Class: dialect.ErrDuplicateObject, VendorCode: 50000, MessagePattern: `object already exists`})

	// 7. Engine facts: what H2 stores. TIMESTAMP keeps 6 fractional digits
	// (event times and query instants are cut there, which time/* checks),
	// DECIMAL goes to 100000 digits (the suite's query table then uses the
	// widest the core asks for, 38).
	// VARCHAR counts UTF-16 code units; H2's scripts widen aggregate_id to 510.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 100000,
		TextUnit: dialect.TextUTF16, AggregateIDLength: 510}

	// 8. The saga tables' TIMESTAMP columns must hold UTC whatever the
	// session's time zone (saga/deadline_due_across_session_time_zones):
	// ANSI's CURRENT_TIMESTAMP, stored in a TIMESTAMP column, takes the
	// session's zone on H2, so the saga statements get H2's UTC clock (UTC
	// text cast to TIMESTAMP) and its millisecond arithmetic.
	const utc = `CAST(FORMATDATETIME(CURRENT_TIMESTAMP, 'yyyy-MM-dd HH:mm:ss.SSSSSS', 'en', 'UTC') AS TIMESTAMP)`
	maps.Copy(c.Statements, dialect.SagaStatements(utc, `TIMESTAMPADD(MILLISECOND, #{lease_millis}, `+utc+`)`))

	// Everything else (seeds, reads, leases, the high-water mark, the clock,
	// query-table columns) runs on H2 2.1 as ANSI writes it.
	return c
}
