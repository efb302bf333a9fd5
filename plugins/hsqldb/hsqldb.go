// Package hsqldb is Tidemark's HSQLDB dialect: the spec's HSQLDB 2.7 DDL, the
// COUNTER_ROW position strategy and HSQLDB's error codes. It describes; the
// core executes.
//
// HSQLDB is reached from Go through the JDBC bridge (package jdbcbridge,
// driver name "jdbcbridge"), so DSNs have the form
//
//	jdbcbridge://127.0.0.1:PORT?url=<url-escaped JDBC URL>&user=SA
//
// The database must run in MVCC mode: put ;hsqldb.tx=mvcc in the JDBC URL
// when the database is created (or run SET DATABASE TRANSACTION CONTROL
// MVCC). In the default LOCKS mode a plain read waits for every writer and
// ignores cancellation.
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
package hsqldb

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// HSQLDB is the HSQLDB dialect.
type HSQLDB struct{}

var _ dialect.Dialect = (*HSQLDB)(nil)

// New returns the HSQLDB dialect.
func New() *HSQLDB { return &HSQLDB{} }

// Describe returns the catalogue.
func (*HSQLDB) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue()}, nil
}

// now is the database clock: TIMESTAMP WITH TIME ZONE, fixed per statement.
const now = `CURRENT_TIMESTAMP`

// DSNHint is an example jdbcbridge DSN for a file database in MVCC mode (url
// is jdbc:hsqldb:file:./tidemark;hsqldb.tx=mvcc).
const DSNHint = "jdbcbridge://127.0.0.1:4242?url=jdbc%3Ahsqldb%3Afile%3A.%2Ftidemark%3Bhsqldb.tx%3Dmvcc&user=SA"

// Catalogue is the HSQLDB catalogue.
func Catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                "hsqldb",
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      "HSQLDB 2.7 (2.7.1 tested) in MVCC mode (hsqldb.tx=mvcc)",
			DriverName:          "jdbcbridge",
			Drivers:             []string{"jdbcbridge"},
			DSNHint:             DSNHint,
			Placeholder:         dialect.PlaceholderQuestion,
			QuoteOpen:           `"`,
			QuoteClose:          `"`,
			MaxIdentifierLength: 128,
			FoldsUnquotedTo:     "upper",
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions:   dialect.CounterRow,
		Scripts:     dialect.Scripts(dialect.ObjectTable, ddl()),
		Statements:  statements(),
		EventInsert: dialect.ANSI().EventInsert,
		// No ForUpdate: in MVCC mode it does not lock against another
		// SELECT … FOR UPDATE; rows are locked by updating them.
		Locks:            dialect.LockForms{Now: now},
		PositionSettings: dialect.PositionSettings{AllocateFirst: true},
		Errors:           errorRules(),
		// Unquoted names are folded to upper case; index and constraint
		// names are unique in the schema, apart from table names. No named
		// lock: concurrent "already exists" is treated as done.
		Naming:        dialect.Naming{IndexScope: dialect.IndexScopeSchema, ReservedWords: reservedWords},
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
	}
}

// errorRules maps HSQLDB's error codes (org.hsqldb.error.ErrorCode, negated
// as JDBC vendor codes). A unique violation names the constraint: SYS_PK_n
// for an unnamed primary key, SYS_CT_n for an unnamed unique constraint.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
		{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: `^SYS_PK_[0-9]+$`},
		{Class: dialect.ErrUniqueViolation, SQLState: "23505"},
		{Class: dialect.ErrForeignKeyViolation, SQLState: "23503"},
		{Class: dialect.ErrNotNullViolation, SQLState: "23502"},     // -10
		{Class: dialect.ErrReadOnly, SQLState: "25006"},             // -3706, a READ ONLY transaction
		{Class: dialect.ErrReadOnly, VendorCode: -455},              // the database is in read only mode
		{Class: dialect.ErrSerializationFailure, SQLState: "40001"}, // -4861, also how MVCC deadlocks end
		{Class: dialect.ErrQueryCanceled, SQLState: "40502"},        // -4872, a cancelled lock wait
		{Class: dialect.ErrQueryCanceled, VendorCode: -4873},        // statement timeout
		{Class: dialect.ErrUndefinedTable, SQLState: "42501", VendorCode: -5501, MessagePattern: `object not found`},
		{Class: dialect.ErrConnectionLost, SQLState: "08*"},
		// -1252: a prepared statement whose table was dropped or altered.
		{Class: dialect.ErrStatementInvalidated, SQLState: "07502"},
		{Class: dialect.ErrDuplicateObject, SQLState: "42504"}, // -5504 object name already exists
	}
}

// statements are ANSI's (dialect.ANSI) with what this engine needs instead.
func statements() map[dialect.StatementID]string {
	lease := `TIMESTAMPADD(MILLISECOND, #{lease_millis}, ` + now + `)`
	st := dialect.ANSI().Statements
	for id, sql := range map[dialect.StatementID]string{
		dialect.PartitionSeed: `MERGE INTO ${partition_metadata_table} t USING (VALUES (1, CAST(#{partitions} AS INT))) AS s (id, partitions) ON t.id = s.id ` +
			`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`,
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + lease +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
	} {
		st[id] = sql
	}
	return st
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
