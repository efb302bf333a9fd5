// Package sqlite is Tidemark's embedded, zero-setup dialect. SQLite is not in
// the spec; its DDL maps the spec's tables one to one (docs/spec-deviations.md).
// Positions use a counter row; SQLite allows one writing transaction at a
// time, so writers must begin with BEGIN IMMEDIATE (modernc.org/sqlite:
// DSN parameter _txlock=immediate) to queue instead of failing.
package sqlite

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// SQLite is the SQLite dialect.
type SQLite struct{}

var _ dialect.Dialect = (*SQLite)(nil)

// New returns the SQLite dialect.
func New() *SQLite { return &SQLite{} }

// Describe returns the catalogue.
func (*SQLite) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue()}, nil
}

const eventColumns = dialect.EventColumns

// now is the database clock in a fixed, lexically ordered UTC form.
const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`

// Catalogue is the SQLite catalogue.
func Catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                "sqlite",
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      "SQLite 3.35 or later (RETURNING)",
			DriverName:          "sqlite",
			Drivers:             []string{"sqlite"},
			DSNHint:             "file:tidemark.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate",
			Placeholder:         dialect.PlaceholderQuestion,
			QuoteOpen:           `"`,
			QuoteClose:          `"`,
			MaxIdentifierLength: 128,
			Embedded:            true,
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions:  dialect.CounterRow,
		Scripts:    dialect.Scripts(dialect.ObjectTable, ddl()),
		Statements: statements(),
		EventInsert: dialect.RowInsert{
			Head: `INSERT INTO ${event_store_table} (` + eventColumns + `) VALUES `,
			Row:  `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, #{global_position})`,
		},
		Locks: dialect.LockForms{Now: now, SerializesWriters: true},
		// SQLite stores names as written but compares them ignoring ASCII
		// case; tables and indexes share sqlite_master's namespace. DDL
		// runs under the database write lock, so no schema lock is needed.
		Naming: dialect.Naming{ReservedWords: reservedWords},
		Errors: []dialect.ErrorRule{
			// SQLITE_CONSTRAINT_PRIMARYKEY (1555) is the event id; the
			// (aggregate_id, sequence_no) constraint is SQLITE_CONSTRAINT_UNIQUE (2067).
			{Class: dialect.ErrDuplicateEventID, VendorCode: 1555},
			{Class: dialect.ErrUniqueViolation, VendorCode: 2067},
			{Class: dialect.ErrUniqueViolation, MessagePattern: `UNIQUE constraint failed`},
			{Class: dialect.ErrForeignKeyViolation, VendorCode: 787},
			{Class: dialect.ErrNotNullViolation, VendorCode: 1299}, // SQLITE_CONSTRAINT_NOTNULL
			// SQLITE_READONLY (8) and its extended codes: a read-only
			// database file or connection (mode=ro, PRAGMA query_only).
			{Class: dialect.ErrReadOnly, VendorCode: 8},
			{Class: dialect.ErrReadOnly, VendorCode: 264},    // READONLY_RECOVERY
			{Class: dialect.ErrReadOnly, VendorCode: 520},    // READONLY_CANTLOCK
			{Class: dialect.ErrReadOnly, VendorCode: 776},    // READONLY_ROLLBACK
			{Class: dialect.ErrReadOnly, VendorCode: 1032},   // READONLY_DBMOVED
			{Class: dialect.ErrLockTimeout, VendorCode: 5},   // SQLITE_BUSY
			{Class: dialect.ErrLockTimeout, VendorCode: 517}, // SQLITE_BUSY_SNAPSHOT
			{Class: dialect.ErrLockTimeout, VendorCode: 261}, // SQLITE_BUSY_RECOVERY
			{Class: dialect.ErrUndefinedTable, MessagePattern: `no such table`},
			{Class: dialect.ErrDuplicateObject, MessagePattern: `already exists`},
		},
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
	}
}

func statements() map[dialect.StatementID]string {
	lease := `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (#{lease_millis} / 1000.0) || ' seconds')`
	return map[dialect.StatementID]string{
		dialect.PartitionSeed:       `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON CONFLICT (id) DO NOTHING`,
		dialect.PartitionRead:       `SELECT partitions FROM ${partition_metadata_table} WHERE id = 1`,
		dialect.PositionSeed:        `INSERT INTO ${position_table} (id, val) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`,
		dialect.PositionAllocate:    `UPDATE ${position_table} SET val = val + #{count} WHERE id = 1 RETURNING val`,
		dialect.StreamVersion:       `SELECT sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC LIMIT 1`,
		dialect.EventStream:         `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND sequence_no > #{after_sequence} ORDER BY sequence_no`,
		dialect.EventRange:          `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.EventPartitionRange: `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.SnapshotInsert:      `INSERT INTO ${aggregate_snapshots_table} (id, aggregate_id, aggregate_type, sequence_no, snapshot_version, payload, created_at) VALUES (#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version}, #{payload}, #{created_at})`,
		dialect.SnapshotLatest:      `SELECT sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC LIMIT 1`,

		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) VALUES (#{topic}, 0, 0) ON CONFLICT (topic_name) DO NOTHING`,
		dialect.HWMRead: `SELECT high_water_mark, pending_end, pending_horizon, lease_owner FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + lease +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
		dialect.HWMRelease: `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL, lease_expires_at = NULL WHERE topic_name = #{topic} AND lease_owner = #{owner}`,
		dialect.HWMAdvance: `UPDATE ${high_water_mark_store_table} SET high_water_mark = #{mark}, pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + now + ` AND high_water_mark < #{mark}`,
		dialect.CommittedEnd: `SELECT val FROM ${position_table} WHERE id = 1`,
		dialect.DatabaseNow:  `SELECT ` + now,
	}
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
