// Package h2 is Tidemark's H2 dialect: the spec's H2 2.1 DDL, the COUNTER_ROW
// position strategy and H2's error codes. It describes; the core executes.
//
// H2 is reached from Go through the JDBC bridge (package jdbcbridge, driver
// name "jdbcbridge"), so DSNs have the form
//
//	jdbcbridge://127.0.0.1:PORT?url=<url-escaped JDBC URL>&user=sa
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
package h2

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// LockTimeoutMillis is the LOCK_TIMEOUT the DSN hint and the conformance
// harness put in H2 JDBC URLs.
const LockTimeoutMillis = 60000

// H2 is the H2 dialect.
type H2 struct{}

var _ dialect.Dialect = (*H2)(nil)

// New returns the H2 dialect.
func New() *H2 { return &H2{} }

// Describe returns the catalogue.
func (*H2) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue()}, nil
}

// now is the database clock. CURRENT_TIMESTAMP is TIMESTAMP WITH TIME ZONE
// and, in H2, fixed for the duration of a transaction; every statement that
// uses it runs in a transaction of its own.
const now = `CURRENT_TIMESTAMP`

// DSNHint is an example jdbcbridge DSN for a file database with the lock
// timeout this dialect expects (url is jdbc:h2:file:./tidemark;LOCK_TIMEOUT=60000).
const DSNHint = "jdbcbridge://127.0.0.1:4242?url=jdbc%3Ah2%3Afile%3A.%2Ftidemark%3BLOCK_TIMEOUT%3D60000&user=sa"

// Catalogue is the H2 catalogue.
func Catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                "h2",
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      "H2 2.1 (2.1.214 tested), default mode",
			DriverName:          "jdbcbridge",
			Drivers:             []string{"jdbcbridge"},
			DSNHint:             DSNHint,
			Placeholder:         dialect.PlaceholderQuestion,
			QuoteOpen:           `"`,
			QuoteClose:          `"`,
			MaxIdentifierLength: 256,
			FoldsUnquotedTo:     "upper",
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions:   dialect.CounterRow,
		Scripts:     dialect.Scripts(dialect.ObjectTable, ddl()),
		Statements:  statements(),
		EventInsert: dialect.ANSI().EventInsert,
		Locks:       dialect.LockForms{ForUpdate: " FOR UPDATE", Now: now},
		Errors:      errorRules(),
		// Unquoted names are folded to upper case; index and constraint
		// names are unique in the schema, apart from table names. H2 has no
		// named lock: concurrent creations that meet "already exists" are
		// treated as done (ErrDuplicateObject) and the schema re-verified.
		Naming:        dialect.Naming{IndexScope: dialect.IndexScopeSchema, ReservedWords: reservedWords},
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
		// TIMESTAMP keeps 6 digits by default; DECIMAL goes to 100000 digits.
		Facts: dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 100000},
	}
}

// errorRules maps H2 2.1's error codes (org.h2.api.ErrorCode). H2 puts the
// violated index in quotes at the start of the message ("PUBLIC.PRIMARY_KEY_5
// ON PUBLIC.EVENT_STORE(ID) …" for a UUID key, "PRIMARY KEY ON PUBLIC.T(ID)"
// for an integer key that is the row id) and appends the SQL text, so the
// primary-key rule's ConstraintPattern matches that name (core/sqlerr cuts it
// out of the message). A unique constraint's index is CONSTRAINT_INDEX_n (or
// the constraint's name). H2 has no read-only transaction (JDBC setReadOnly
// is a hint it ignores); 90097 is a read-only database.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
		{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: `^(?:[^" ]*\.)?PRIMARY(?:_KEY_[0-9A-Z]*| KEY)$`},
		{Class: dialect.ErrUniqueViolation, SQLState: "23505"},
		{Class: dialect.ErrForeignKeyViolation, SQLState: "23503"},
		{Class: dialect.ErrForeignKeyViolation, SQLState: "23506"},
		{Class: dialect.ErrNotNullViolation, SQLState: "23502"},
		{Class: dialect.ErrDeadlock, SQLState: "40001"},
		{Class: dialect.ErrLockTimeout, VendorCode: 50200},
		{Class: dialect.ErrLockTimeout, SQLState: "HYT00"},
		{Class: dialect.ErrSerializationFailure, VendorCode: 90131}, // concurrent update
		{Class: dialect.ErrQueryCanceled, SQLState: "57014"},
		{Class: dialect.ErrReadOnly, VendorCode: 90097},        // DATABASE_IS_READ_ONLY
		{Class: dialect.ErrDuplicateObject, VendorCode: 42101}, // table exists
		{Class: dialect.ErrDuplicateObject, VendorCode: 42111}, // index exists
		{Class: dialect.ErrDuplicateObject, VendorCode: 90045}, // constraint exists
		{Class: dialect.ErrDuplicateObject, VendorCode: 90035}, // sequence exists
		// Two sessions creating one index at once: the loser's general
		// error (50000) from H2's schema map, not its 42111.
		{Class: dialect.ErrDuplicateObject, VendorCode: 50000, MessagePattern: `object already exists`},
		{Class: dialect.ErrUndefinedTable, VendorCode: 42102},
		{Class: dialect.ErrUndefinedTable, VendorCode: 42103},
		{Class: dialect.ErrUndefinedTable, VendorCode: 42104},
		{Class: dialect.ErrConnectionLost, SQLState: "08*"},
		{Class: dialect.ErrConnectionLost, VendorCode: 90067}, // connection broken
		{Class: dialect.ErrConnectionLost, VendorCode: 90098}, // database is closed
	}
}

// statements are ANSI's (dialect.ANSI) with what this engine needs instead.
func statements() map[dialect.StatementID]string {
	lease := `TIMESTAMPADD(MILLISECOND, #{lease_millis}, ` + now + `)`
	st := dialect.ANSI().Statements
	for id, sql := range map[dialect.StatementID]string{
		dialect.PartitionSeed: `MERGE INTO ${partition_metadata_table} t USING (VALUES (1, CAST(#{partitions} AS INT))) AS s (id, partitions) ON t.id = s.id ` +
			`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`,
		// The UPDATE locks the row until the transaction ends; FINAL TABLE
		// returns the value it wrote.
		dialect.PositionAllocate: `SELECT val FROM FINAL TABLE (UPDATE ${position_table} SET val = val + #{count} WHERE id = 1)`,
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + lease +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
		dialect.DatabaseNow: `SELECT ` + now,
	} {
		st[id] = sql
	}
	// The counter's new value comes back from the UPDATE itself (FINAL TABLE).
	delete(st, dialect.PositionAllocated)
	return st
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
