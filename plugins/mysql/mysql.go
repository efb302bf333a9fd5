package mysql

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// Flavor is the engine a catalogue is described for. The schema, the
// statements and the error rules are the same for both; the flavor names the
// dialect ("mysql" or "mariadb") and the server versions it supports.
type Flavor int

// Flavors.
const (
	// FlavorMySQL is MySQL 8.0 or later.
	FlavorMySQL Flavor = iota
	// FlavorMariaDB is MariaDB 10.6 or later.
	FlavorMariaDB
)

// String returns the dialect name of the flavor: "mysql" or "mariadb".
func (f Flavor) String() string {
	if f == FlavorMariaDB {
		return "mariadb"
	}
	return "mysql"
}

// MySQL is the MySQL / MariaDB dialect.
type MySQL struct {
	flavor Flavor
}

var _ dialect.Dialect = (*MySQL)(nil)

// Option configures New.
type Option func(*MySQL)

// MariaDB makes New describe the MariaDB flavor (dialect name "mariadb").
func MariaDB() Option { return func(m *MySQL) { m.flavor = FlavorMariaDB } }

// New returns the MySQL dialect, or the MariaDB one with the MariaDB option.
func New(opts ...Option) *MySQL {
	m := &MySQL{}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Flavor returns the engine the dialect describes.
func (m *MySQL) Flavor() Flavor { return m.flavor }

// Describe returns the catalogue.
func (m *MySQL) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue(m.flavor)}, nil
}

// eventColumns is the read order every event read returns.
const eventColumns = dialect.EventColumns

// now is the database clock in UTC, with microseconds, comparable with the
// DATETIME(6) lease columns (which hold UTC).
const now = `UTC_TIMESTAMP(6)`

// DSNHint is an example go-sql-driver/mysql DSN. parseTime=true&loc=UTC are
// required: DATETIME(6) columns hold UTC, time.Time arguments must be sent
// as UTC and must come back as time.Time in UTC. charset=utf8mb4 makes the
// connection carry 4-byte UTF-8 whatever the server's default character set;
// time_zone='+00:00' keeps the session clock (NOW(), column defaults) in UTC.
const DSNHint = "user:password@tcp(127.0.0.1:3306)/db?parseTime=true&loc=UTC&charset=utf8mb4&collation=utf8mb4_bin&time_zone=%27%2B00%3A00%27"

// Catalogue is the catalogue of flavor f.
func Catalogue(f Flavor) dialect.Catalogue {
	servers := "MySQL 8.0.17 or later (SKIP LOCKED; utf8mb4_0900_bin for keys)"
	if f == FlavorMariaDB {
		servers = "MariaDB 10.6 or later (SKIP LOCKED)"
	}
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                f.String(),
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      servers,
			DriverName:          "mysql",
			Drivers:             []string{"mysql"},
			DSNHint:             DSNHint,
			Placeholder:         dialect.PlaceholderQuestion,
			QuoteOpen:           "`",
			QuoteClose:          "`",
			MaxIdentifierLength: MaxIdentifierLength,
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions: dialect.CounterRow,
		// The OK packet of the UPDATE carries LAST_INSERT_ID(val + n): one
		// round trip fewer while the counter row is locked.
		PositionSettings: dialect.PositionSettings{AllocatedInResult: true},
		Scripts:          dialect.Scripts(dialect.ObjectTable, ddl()),
		Statements:       statements(),
		EventInsert: dialect.RowInsert{
			Head: `INSERT INTO ${event_store_table} (` + eventColumns + `) VALUES `,
			Row:  `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, #{global_position})`,
		},
		Locks:  dialect.LockForms{ForUpdate: " FOR UPDATE", SkipLocked: true, Now: now},
		Errors: errorRules(),
		Naming: naming(f),
		// GET_LOCK is server-wide: the name carries the database's, hashed
		// to stay within the 64 characters a lock name may have.
		SchemaLock: dialect.SchemaLock{
			Acquire: `SELECT GET_LOCK(CONCAT(#{name}, '.', MD5(COALESCE(DATABASE(), ''))), 31536000)`,
			Release: `SELECT RELEASE_LOCK(CONCAT(#{name}, '.', MD5(COALESCE(DATABASE(), ''))))`,
		},
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
	}
}

// errorRules maps MySQL / MariaDB error numbers (the driver's
// MySQLError.Number) to the core's classes. Both engines share the numbers
// below; where one has a number of its own it is listed too.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
		// ER_DUP_ENTRY names the key: 'PRIMARY' (MariaDB, MySQL 5.7) or
		// 'table.PRIMARY' (MySQL 8.0.19+). The event table's primary key
		// is the event id; its other unique keys are sequence conflicts.
		{Class: dialect.ErrDuplicateEventID, VendorCode: 1062, ConstraintPattern: `^([^' .]+\.)?PRIMARY$`},
		{Class: dialect.ErrUniqueViolation, VendorCode: 1062},
		{Class: dialect.ErrUniqueViolation, VendorCode: 1586}, // ER_DUP_ENTRY_WITH_KEY_NAME
		{Class: dialect.ErrForeignKeyViolation, VendorCode: 1452},
		{Class: dialect.ErrForeignKeyViolation, VendorCode: 1451},
		{Class: dialect.ErrForeignKeyViolation, VendorCode: 1216},
		{Class: dialect.ErrForeignKeyViolation, VendorCode: 1217},
		{Class: dialect.ErrNotNullViolation, VendorCode: 1048}, // ER_BAD_NULL_ERROR: Column 'x' cannot be null
		{Class: dialect.ErrNotNullViolation, VendorCode: 1364}, // strict mode: Field 'x' doesn't have a default value
		// 1213 is also how Galera reports a certification failure.
		{Class: dialect.ErrDeadlock, VendorCode: 1213},
		{Class: dialect.ErrSerializationFailure, VendorCode: 1020}, // MariaDB innodb_snapshot_isolation: Record has changed since last read
		{Class: dialect.ErrReadOnly, VendorCode: 1792},             // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION (25006)
		// ER_OPTION_PREVENTS_STATEMENT names the option; only the read-only
		// ones (a replica, a demoted primary) are this class.
		{Class: dialect.ErrReadOnly, VendorCode: 1290, MessagePattern: `--(super-)?read-only`},
		{Class: dialect.ErrLockTimeout, VendorCode: 1205},
		{Class: dialect.ErrLockTimeout, VendorCode: 3572}, // MySQL 8: NOWAIT
		{Class: dialect.ErrUndefinedTable, VendorCode: 1146},
		{Class: dialect.ErrDuplicateObject, VendorCode: 1050}, // table exists
		{Class: dialect.ErrDuplicateObject, VendorCode: 1061}, // duplicate key name
		{Class: dialect.ErrQueryCanceled, VendorCode: 1317},   // ER_QUERY_INTERRUPTED (KILL QUERY)
		{Class: dialect.ErrQueryCanceled, VendorCode: 3024},   // MySQL: max_execution_time exceeded
		{Class: dialect.ErrQueryCanceled, VendorCode: 1969},   // MariaDB: max_statement_time exceeded
		{Class: dialect.ErrConnectionLost, VendorCode: 2006},
		{Class: dialect.ErrConnectionLost, VendorCode: 2013},
		{Class: dialect.ErrConnectionLost, VendorCode: 1927}, // MariaDB: connection was killed
		{Class: dialect.ErrConnectionLost, VendorCode: 4031}, // MySQL 8: disconnected by the server
		{Class: dialect.ErrConnectionLost, VendorCode: 1053}, // server shutdown in progress
		// go-sql-driver/mysql reports a lost connection without a server
		// error number: mysql.ErrInvalidConn or driver.ErrBadConn.
		{Class: dialect.ErrConnectionLost, MessagePattern: `^(invalid connection|driver: bad connection)$`},
	}
}

// statements is the statement set of both flavors.
//
// The counter is allocated in one locking statement: LAST_INSERT_ID(expr)
// sets the session's LAST_INSERT_ID to the new value, which
// PositionAllocated reads back without touching the table again (neither
// MySQL nor MariaDB has UPDATE … RETURNING). The row stays locked until the
// transaction ends; a rollback restores it.
//
// Seeds use INSERT … ON DUPLICATE KEY UPDATE <key> = <key>, which never
// changes an existing row and, unlike INSERT IGNORE, lets every other error
// through. While an open append holds the counter row, the seed of that row
// waits for it (the duplicate check takes a lock on the existing row).
//
// Leases are computed on the database clock in UTC (UTC_TIMESTAMP(6)), so
// they do not depend on the session time zone.
func statements() map[dialect.StatementID]string {
	lease := now + ` + INTERVAL (#{lease_millis} * 1000) MICROSECOND`
	return map[dialect.StatementID]string{
		dialect.PartitionSeed:       `INSERT INTO ${partition_metadata_table} (id, partitions) VALUES (1, #{partitions}) ON DUPLICATE KEY UPDATE id = id`,
		dialect.PartitionRead:       `SELECT partitions FROM ${partition_metadata_table} WHERE id = 1`,
		dialect.PositionSeed:        `INSERT INTO ${position_table} (id, val) VALUES (1, 0) ON DUPLICATE KEY UPDATE id = id`,
		dialect.PositionAllocate:    `UPDATE ${position_table} SET val = LAST_INSERT_ID(val + #{count}) WHERE id = 1`,
		dialect.PositionAllocated:   `SELECT LAST_INSERT_ID()`,
		dialect.StreamVersion:       `SELECT sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC LIMIT 1`,
		dialect.EventStream:         `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND sequence_no > #{after_sequence} ORDER BY sequence_no`,
		dialect.EventRange:          `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.EventPartitionRange: `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position LIMIT #{limit}`,
		dialect.SnapshotInsert:      `INSERT INTO ${aggregate_snapshots_table} (id, aggregate_id, aggregate_type, sequence_no, snapshot_version, payload, created_at) VALUES (#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version}, #{payload}, #{created_at})`,
		dialect.SnapshotLatest:      `SELECT sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC LIMIT 1`,

		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) VALUES (#{topic}, 0, 0) ON DUPLICATE KEY UPDATE topic_name = topic_name`,
		dialect.HWMRead: `SELECT high_water_mark, pending_end, pending_horizon, lease_owner FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		// The affected-row count is the count of changed rows (the driver's
		// default, clientFoundRows=false); a renewal always changes
		// lease_expires_at, the clock having moved by at least a microsecond.
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + lease +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
		dialect.HWMRelease: `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL, lease_expires_at = NULL WHERE topic_name = #{topic} AND lease_owner = #{owner}`,
		dialect.HWMAdvance: `UPDATE ${high_water_mark_store_table} SET high_water_mark = #{mark}, pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + now + ` AND high_water_mark < #{mark}`,
		// A plain SELECT is a consistent, non-locking read in InnoDB: it
		// sees the last committed counter and never waits for an append.
		dialect.CommittedEnd: `SELECT val FROM ${position_table} WHERE id = 1`,
		dialect.DatabaseNow:  `SELECT ` + now,
	}
}

// reservedWords are the 245 words MariaDB 10.11 refuses as a table or
// column name: of its own INFORMATION_SCHEMA.KEYWORDS (which lists
// non-reserved keywords too) and the SQL standard's reserved words, those
// it refuses when creating a table and a column of each name (the
// conformance suite's TIDEMARK_PROBE_WORDS mode).
var reservedWords = strings.Fields(`
ACCESSIBLE ADD ALL ALTER ANALYZE AND AS ASC ASENSITIVE BEFORE BETWEEN BIGINT BINARY BLOB BOTH BY
CALL CASCADE CASE CHANGE CHAR CHARACTER CHECK COLLATE COLUMN CONDITION CONSTRAINT CONTINUE CONVERT
CREATE CROSS CURRENT_DATE CURRENT_ROLE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURSOR DATABASES
DAY_HOUR DAY_MICROSECOND DAY_MINUTE DAY_SECOND DEC DECIMAL DECLARE DEFAULT DELAYED DELETE
DELETE_DOMAIN_ID DESC DESCRIBE DETERMINISTIC DISTINCT DISTINCTROW DIV DOUBLE DO_DOMAIN_IDS DROP DUAL
EACH ELSE ELSEIF ENCLOSED ESCAPED EXCEPT EXISTS EXIT EXPLAIN FALSE FETCH FLOAT FLOAT4 FLOAT8 FOR
FORCE FOREIGN FROM FULLTEXT GRANT GROUP HAVING HIGH_PRIORITY HOUR_MICROSECOND HOUR_MINUTE
HOUR_SECOND IF IGNORE IGNORE_DOMAIN_IDS IN INDEX INFILE INNER INOUT INSENSITIVE INSERT INT INT1 INT2
INT3 INT4 INT8 INTEGER INTERSECT INTERVAL INTO IS ITERATE JOIN KEY KEYS KILL LEADING LEAVE LEFT LIKE
LIMIT LINEAR LINES LOAD LOCALTIME LOCALTIMESTAMP LOCK LONG LONGBLOB LONGTEXT LOOP LOW_PRIORITY
MASTER_DEMOTE_TO_REPLICA MASTER_DEMOTE_TO_SLAVE MASTER_SSL_VERIFY_SERVER_CERT MATCH MAXVALUE
MEDIUMBLOB MEDIUMINT MEDIUMTEXT MIDDLEINT MINUTE_MICROSECOND MINUTE_SECOND MOD MODIFIES NATURAL NOT
NO_WRITE_TO_BINLOG NULL NUMERIC OFFSET ON OPTIMIZE OPTIONALLY OR ORDER OUT OUTER OUTFILE OVER
PAGE_CHECKSUM PARSE_VCOL_EXPR PARTITION PORTION PRECISION PRIMARY PROCEDURE PURGE RANGE READ READS
READ_WRITE REAL RECURSIVE REFERENCES REF_SYSTEM_ID REGEXP RELEASE RENAME REPEAT REPLACE REQUIRE
RESIGNAL RESTRICT RETURN RETURNING REVOKE RIGHT RLIKE ROWS ROW_NUMBER SCHEMAS SECOND_MICROSECOND
SELECT SENSITIVE SEPARATOR SET SHOW SIGNAL SMALLINT SPATIAL SPECIFIC SQL SQLEXCEPTION SQLSTATE
SQLWARNING SQL_BIG_RESULT SQL_CALC_FOUND_ROWS SQL_SMALL_RESULT SSL STARTING STATS_AUTO_RECALC
STATS_PERSISTENT STATS_SAMPLE_PAGES STRAIGHT_JOIN TABLE TERMINATED THEN TINYBLOB TINYINT TINYTEXT TO
TRAILING TRIGGER TRUE UNDO UNION UNIQUE UNLOCK UNSIGNED UPDATE USAGE USE USING UTC_DATE UTC_TIME
UTC_TIMESTAMP VALUES VARBINARY VARCHAR VARCHARACTER VARYING WHEN WHERE WHILE WITH WRITE XOR
YEAR_MONTH ZEROFILL
`)

// mysql8ReservedWords are reserved by MySQL 8.0 beyond MariaDB's list (the
// window and JSON functions, LATERAL, RECURSIVE …; "Keywords and Reserved
// Words" of the MySQL 8.0 manual, marked (R)). No MySQL 8 server runs here
// to probe them.
var mysql8ReservedWords = strings.Fields(`
ARRAY CUBE CUME_DIST DENSE_RANK EMPTY FIRST_VALUE FUNCTION GROUPING GROUPS JSON_TABLE LAG LAST_VALUE
LATERAL LEAD MEMBER NTH_VALUE NTILE OF OVER PERCENT_RANK RANK RECURSIVE ROW ROWS ROW_NUMBER SYSTEM WINDOW
`)

// naming is MySQL's and MariaDB's: on Linux (lower_case_table_names=0, the
// default there) table names are case-sensitive, index names are not and
// are unique per table. A server with lower_case_table_names=1 (Windows,
// macOS) folds table names: there, names differing only in case would be
// one table, and should not be configured.
func naming(f Flavor) dialect.Naming {
	words := append([]string(nil), reservedWords...)
	if f != FlavorMariaDB {
		words = append(words, mysql8ReservedWords...)
	}
	return dialect.Naming{TablesCaseSensitive: true, IndexScope: dialect.IndexScopeTable, ReservedWords: words}
}
