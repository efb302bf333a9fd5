// Package postgres is Tidemark's PostgreSQL dialect: the spec's PostgreSQL
// DDL, the SEQUENCE_XID_HORIZON position strategy and PostgreSQL's error
// codes. It describes; the core executes.
package postgres

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// Postgres is the PostgreSQL dialect.
type Postgres struct{}

var _ dialect.Dialect = (*Postgres)(nil)

// New returns the PostgreSQL dialect.
func New() *Postgres { return &Postgres{} }

// Describe returns the catalogue.
func (*Postgres) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue()}, nil
}

// eventColumns is the read order every event read returns.
const eventColumns = dialect.EventColumns

// Catalogue is the PostgreSQL catalogue.
func Catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                "postgres",
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      "PostgreSQL 13 or later (pg_current_xact_id)",
			DriverName:          "pgx",
			Drivers:             []string{"pgx", "postgres"},
			DSNHint:             "postgres://user:password@127.0.0.1:5432/db?sslmode=disable",
			Placeholder:         dialect.PlaceholderDollar,
			QuoteOpen:           `"`,
			QuoteClose:          `"`,
			MaxIdentifierLength: 63,
			FoldsUnquotedTo:     "lower",
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions:  dialect.SequenceXIDHorizon,
		Scripts:    dialect.Scripts(dialect.ObjectSequence, ddl()),
		Statements: statements(),
		EventInsert: dialect.RowInsert{
			Head: `INSERT INTO ${event_store_table} (` + eventColumns + `) VALUES `,
			// pg_current_xact_id() assigns the transaction id before nextval
			// is evaluated (CASE evaluates its condition first), so every
			// position is drawn by a transaction that already has its id.
			Row:  `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('${event_store_global_position_table}') END)`,
			Tail: ` RETURNING global_position, sequence_no`,
			// Both read this type's stream only (the spec's index on
			// (aggregate_id, aggregate_type, sequence_no) answers them): an id
			// another type holds in a shared table reads as empty, the row
			// then hits UNIQUE (aggregate_id, sequence_no) and the core
			// reports AggregateIDTakenError. Unfiltered, an Any append
			// continued the other type's sequence: two streams merged.
			NextSequence:    `(SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) + #{sequence_offset}`,
			CheckedSequence: `CASE WHEN (SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) = CAST(#{expected_version} AS BIGINT) THEN CAST(#{sequence_no} AS BIGINT) END`,
		},
		Locks: dialect.LockForms{ForUpdate: " FOR UPDATE", SkipLocked: true, Now: "now()"},
		Errors: []dialect.ErrorRule{
			// An unnamed primary key is <table>_pkey; pgx and lib/pq carry
			// the constraint name in the error.
			{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: `_pkey$`},
			{Class: dialect.ErrUniqueViolation, SQLState: "23505"},
			{Class: dialect.ErrForeignKeyViolation, SQLState: "23503"},
			{Class: dialect.ErrNotNullViolation, SQLState: "23502"},
			{Class: dialect.ErrDeadlock, SQLState: "40P01"},
			{Class: dialect.ErrSerializationFailure, SQLState: "40001"},
			{Class: dialect.ErrLockTimeout, SQLState: "55P03"},
			{Class: dialect.ErrQueryCanceled, SQLState: "57014"},
			// A READ ONLY transaction, default_transaction_read_only, or a
			// hot standby ("cannot execute … in a read-only transaction").
			{Class: dialect.ErrReadOnly, SQLState: "25006"},
			{Class: dialect.ErrUndefinedTable, SQLState: "42P01"},
			{Class: dialect.ErrDuplicateObject, SQLState: "42P07"}, // duplicate_table
			{Class: dialect.ErrDuplicateObject, SQLState: "42710"}, // duplicate_object
			{Class: dialect.ErrConnectionLost, SQLState: "08*"},
			{Class: dialect.ErrConnectionLost, SQLState: "57P01"},
		},
		// pg_class holds tables, sequences and indexes under one
		// namespace; unquoted names are folded, so case never tells two
		// apart. The advisory lock is per database, held by the session.
		Naming: dialect.Naming{ReservedWords: reservedWords},
		SchemaLock: dialect.SchemaLock{
			Acquire: `SELECT pg_advisory_lock(hashtextextended(#{name}, 0))`,
			Release: `SELECT pg_advisory_unlock(hashtextextended(#{name}, 0))`,
		},
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
	}
}

func statements() map[dialect.StatementID]string {
	return map[dialect.StatementID]string{
		dialect.PartitionSeed:       `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON CONFLICT (id) DO NOTHING`,
		dialect.PartitionRead:       `SELECT partitions FROM ${partition_metadata_table} WHERE id = 1`,
		dialect.PositionCacheSize:   `SELECT cache_size FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = lower('${position_table}')`,
		dialect.PositionFixCache:    `ALTER SEQUENCE ${position_table} CACHE 1`,
		dialect.StreamVersion:       `SELECT sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC LIMIT 1`,
		dialect.EventStream:         `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND sequence_no > #{after_sequence} ORDER BY sequence_no`,
		dialect.EventRange:          `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.EventPartitionRange: `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.SnapshotInsert:      `INSERT INTO ${aggregate_snapshots_table} (id, aggregate_id, aggregate_type, sequence_no, snapshot_version, payload, created_at) VALUES (#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version}, #{payload}, #{created_at})`,
		dialect.SnapshotLatest:      `SELECT sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC LIMIT 1`,

		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark) VALUES (#{topic}, 0) ON CONFLICT (topic_name) DO NOTHING`,
		dialect.HWMRead: `SELECT high_water_mark, pending_end, pending_horizon, lease_owner FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = clock_timestamp() + #{lease_millis} * interval '1 millisecond' ` +
			`WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < clock_timestamp())`,
		dialect.HWMRelease: `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL, lease_expires_at = NULL WHERE topic_name = #{topic} AND lease_owner = #{owner}`,
		dialect.HWMAdvance: `UPDATE ${high_water_mark_store_table} SET high_water_mark = #{mark}, pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= clock_timestamp() AND high_water_mark < #{mark}`,
		dialect.HWMSetPending: `UPDATE ${high_water_mark_store_table} SET pending_end = #{pending_end}, pending_horizon = #{pending_horizon} ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= clock_timestamp()`,
		dialect.HWMClearPending: `UPDATE ${high_water_mark_store_table} SET pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= clock_timestamp()`,
		// Reading the sequence relation is not transactional: it shows the
		// last value any session drew (CACHE 1), committed or not.
		dialect.CommittedEnd:     `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${position_table}`,
		dialect.CurrentXID:       `SELECT pg_current_xact_id()::text::bigint`,
		dialect.OldestRunningXID: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`,
		dialect.HWMNotify:        `SELECT pg_notify('tidemark_hwm', #{topic})`,
		dialect.DatabaseNow:      `SELECT clock_timestamp()`,
	}
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
