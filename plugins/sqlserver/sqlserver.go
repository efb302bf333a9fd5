package sqlserver

import (
	"context"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// SQLServer is the SQL Server dialect.
type SQLServer struct{}

var _ dialect.Dialect = (*SQLServer)(nil)

// New returns the SQL Server dialect.
func New() *SQLServer { return &SQLServer{} }

// Describe returns the catalogue.
func (*SQLServer) Describe(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return dialect.DescribeResponse{Catalogue: Catalogue()}, nil
}

// eventColumns is the read order every event read returns.
const eventColumns = dialect.EventColumns

// now is the database clock in UTC, the form the DATETIME2 columns hold.
const now = `SYSUTCDATETIME()`

// DSNHint is an example github.com/microsoft/go-mssqldb DSN (driver name
// "sqlserver", which takes @p1-style parameters).
const DSNHint = "sqlserver://user:password@127.0.0.1:1433?database=db"

// Catalogue is the SQL Server catalogue.
//
// # Positions and isolation
//
// Positions use a counter row (COUNTER_ROW): PositionAllocate is one UPDATE
// that adds the batch size and returns the new value through OUTPUT, and
// keeps the row exclusively locked until the append commits or rolls back.
//
// The committed end (CommittedEnd) is a plain SELECT of the counter, which
// is correct under both settings of READ_COMMITTED_SNAPSHOT:
//
//   - RCSI on (recommended, the default of Azure SQL Database): the read
//     returns the last committed version of the row at once;
//   - RCSI off (locking read committed, the default of SQL Server): the read
//     waits for the open append that holds the row and then returns its
//     committed value. The advancer then waits at most as long as the
//     longest append; it never sees an uncommitted value. The alternatives
//     are wrong or starve: NOLOCK would read uncommitted positions (the mark
//     could pass events that roll back), READPAST would find no row while
//     any append is open, so under steady load the mark would never move.
//
// Under RCSI off, readers of the event tables may also wait for appends
// whose rows lie next to their range; READ_COMMITTED_SNAPSHOT ON avoids
// every such wait.
func Catalogue() dialect.Catalogue {
	return dialect.Catalogue{
		Identity: dialect.Identity{
			Name:                "sqlserver",
			Version:             Version,
			ContractVersion:     dialect.ContractVersion,
			ServerVersions:      "SQL Server 2019 or later, Azure SQL Database",
			DriverName:          "sqlserver",
			Drivers:             []string{"sqlserver"},
			DSNHint:             DSNHint,
			Placeholder:         dialect.PlaceholderAtP,
			QuoteOpen:           "[",
			QuoteClose:          "]",
			MaxIdentifierLength: MaxIdentifierLength,
			MaxBindParameters:   2100,
			StatementTerminator: ";", // no statement has a procedural body
		},
		Positions:  dialect.CounterRow,
		Scripts:    dialect.Scripts(dialect.ObjectTable, ddl()),
		Statements: statements(),
		// A multi-row VALUES takes at most 1000 rows; a request at most
		// 2100 parameters (11 per row).
		EventInsert: dialect.RowInsert{
			Head: `INSERT INTO ${event_store_table} (` + eventColumns + `) VALUES `,
			Row:  `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, #{global_position})`,
		},
		// T-SQL locks rows with table hints (WITH (UPDLOCK, ROWLOCK)), not a
		// SELECT suffix, and skips locked rows with READPAST.
		Locks:         dialect.LockForms{Now: now},
		Errors:        errorRules(),
		Introspection: introspection(),
		QueryColumns:  queryColumns(),
		// occurred_at is DATETIME2 (7 digits, 100 ns); instant columns are
		// DATETIME2(6); DECIMAL goes to 38 digits.
		Facts: dialect.EngineFacts{EventTimeDigits: 7, InstantDigits: 6, MaxDecimalPrecision: 38},
		// SQL Server compares NVARCHAR with PAD SPACE under every collation,
		// Latin1_General_100_BIN2 included ("acc-1 " = "acc-1", and a unique
		// key refuses the second): no collation keeps them apart, so the core
		// refuses keys ending in a space. Case and Unicode normalisation are
		// exact under BIN2 (code-point order).
		KeysIgnoreTrailingSpaces: true,
		// The zero Naming (case ignored, one namespace) is the reading of a
		// case-insensitive collation, the default, where constraint names
		// share sys.objects with tables. Not probed here: no SQL Server runs
		// on this project's machines.
		Naming: dialect.Naming{ReservedWords: reservedWords},
	}
}

// reservedWords are SQL Server's reserved keywords ("Reserved Keywords
// (Transact-SQL)" of its documentation, the list for SQL Server itself,
// not the ODBC or future ones).
var reservedWords = strings.Fields(`
ADD ALL ALTER AND ANY AS ASC AUTHORIZATION BACKUP BEGIN BETWEEN BREAK BROWSE BULK BY CASCADE CASE
CHECK CHECKPOINT CLOSE CLUSTERED COALESCE COLLATE COLUMN COMMIT COMPUTE CONSTRAINT CONTAINS
CONTAINSTABLE CONTINUE CONVERT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP
CURRENT_USER CURSOR DATABASE DBCC DEALLOCATE DECLARE DEFAULT DELETE DENY DESC DISK DISTINCT
DISTRIBUTED DOUBLE DROP DUMP ELSE END ERRLVL ESCAPE EXCEPT EXEC EXECUTE EXISTS EXIT EXTERNAL FETCH
FILE FILLFACTOR FOR FOREIGN FREETEXT FREETEXTTABLE FROM FULL FUNCTION GOTO GRANT GROUP HAVING
HOLDLOCK IDENTITY IDENTITYCOL IDENTITY_INSERT IF IN INDEX INNER INSERT INTERSECT INTO IS JOIN KEY
KILL LEFT LIKE LINENO LOAD MERGE NATIONAL NOCHECK NONCLUSTERED NOT NULL NULLIF OF OFF OFFSETS ON
OPEN OPENDATASOURCE OPENQUERY OPENROWSET OPENXML OPTION OR ORDER OUTER OVER PERCENT PIVOT PLAN
PRECISION PRIMARY PRINT PROC PROCEDURE PUBLIC RAISERROR READ READTEXT RECONFIGURE REFERENCES
REPLICATION RESTORE RESTRICT RETURN REVERT REVOKE RIGHT ROLLBACK ROWCOUNT ROWGUIDCOL RULE SAVE
SCHEMA SECURITYAUDIT SELECT SEMANTICKEYPHRASETABLE SEMANTICSIMILARITYDETAILSTABLE
SEMANTICSIMILARITYTABLE SESSION_USER SET SETUSER SHUTDOWN SOME STATISTICS SYSTEM_USER TABLE
TABLESAMPLE TEXTSIZE THEN TO TOP TRAN TRANSACTION TRIGGER TRUNCATE TRY_CONVERT TSEQUAL UNION UNIQUE
UNPIVOT UPDATE UPDATETEXT USE USER VALUES VARYING VIEW WAITFOR WHEN WHERE WHILE WITH WITHIN
WRITETEXT
`)

// errorRules maps SQL Server error numbers (go-mssqldb's Error.Number) to
// the core's classes.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
		// 2627 is a PRIMARY KEY or UNIQUE constraint, 2601 a unique index.
		// The event table's primary key is the event id; unnamed, it is
		// PK__<table>__<hash>.
		{Class: dialect.ErrDuplicateEventID, VendorCode: 2627, ConstraintPattern: `(?i)^PK_`},
		{Class: dialect.ErrUniqueViolation, VendorCode: 2627},
		{Class: dialect.ErrUniqueViolation, VendorCode: 2601},
		// 547 is also a CHECK constraint; only FOREIGN KEY / REFERENCE ones count.
		{Class: dialect.ErrForeignKeyViolation, VendorCode: 547, MessagePattern: `(FOREIGN KEY|REFERENCE) constraint`},
		{Class: dialect.ErrNotNullViolation, VendorCode: 515}, // Cannot insert the value NULL into column
		{Class: dialect.ErrDeadlock, VendorCode: 1205},
		{Class: dialect.ErrLockTimeout, VendorCode: 1222},
		// Snapshot isolation update conflict.
		{Class: dialect.ErrSerializationFailure, VendorCode: 3960},
		{Class: dialect.ErrReadOnly, VendorCode: 3906}, // the database is read-only
		{Class: dialect.ErrUndefinedTable, VendorCode: 208},
		{Class: dialect.ErrDuplicateObject, VendorCode: 2714}, // there is already an object named …
		{Class: dialect.ErrDuplicateObject, VendorCode: 1913}, // index already exists
		{Class: dialect.ErrQueryCanceled, MessagePattern: `(?i)operation cancel+ed`},
		{Class: dialect.ErrConnectionLost, MessagePattern: `^driver: bad connection$`},
		{Class: dialect.ErrConnectionLost, MessagePattern: `(?i)(connection reset by peer|broken pipe|unexpected EOF)`},
	}
}

// statements is the statement set.
//
// Seeds insert a row only when a probe under UPDLOCK, HOLDLOCK finds none:
// the probe locks the key (range) it read until the statement ends, so two
// concurrent seeds cannot both insert, and an existing row is never
// overwritten.
//
// Paging uses ORDER BY … OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY; leases
// are computed on the database clock in UTC (SYSUTCDATETIME()). SQL Server
// reports the rows an UPDATE matched (unless SET NOCOUNT ON), so HWMAcquire
// counts a renewal as held.
func statements() map[dialect.StatementID]string {
	lease := `DATEADD(millisecond, CAST(#{lease_millis} AS INT), ` + now + `)`
	return map[dialect.StatementID]string{
		dialect.PartitionSeed: `INSERT INTO ${partition_metadata_table} (id, partitions) SELECT 1, #{partitions} ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${partition_metadata_table} WITH (UPDLOCK, HOLDLOCK) WHERE id = 1)`,
		dialect.PartitionRead: `SELECT partitions FROM ${partition_metadata_table} WHERE id = 1`,
		dialect.PositionSeed: `INSERT INTO ${position_table} (id, val) SELECT 1, 0 ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${position_table} WITH (UPDLOCK, HOLDLOCK) WHERE id = 1)`,
		dialect.PositionAllocate:    `UPDATE ${position_table} WITH (UPDLOCK, HOLDLOCK) SET val = val + #{count} OUTPUT inserted.val WHERE id = 1`,
		dialect.StreamVersion:       `SELECT TOP (1) sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC`,
		dialect.EventStream:         `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND sequence_no > #{after_sequence} ORDER BY sequence_no`,
		dialect.EventRange:          `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY`,
		dialect.EventPartitionRange: `SELECT ` + eventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY`,
		dialect.SnapshotInsert:      `INSERT INTO ${aggregate_snapshots_table} (id, aggregate_id, aggregate_type, sequence_no, snapshot_version, payload, created_at) VALUES (#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version}, #{payload}, #{created_at})`,
		dialect.SnapshotLatest:      `SELECT TOP (1) sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC`,

		dialect.HWMSeed: `INSERT INTO ${high_water_mark_store_table} (topic_name, high_water_mark, topic_start) SELECT #{topic}, 0, 0 ` +
			`WHERE NOT EXISTS (SELECT 1 FROM ${high_water_mark_store_table} WITH (UPDLOCK, HOLDLOCK) WHERE topic_name = #{topic})`,
		dialect.HWMRead: `SELECT high_water_mark, pending_end, pending_horizon, lease_owner FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		dialect.HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + lease +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
		dialect.HWMRelease: `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL, lease_expires_at = NULL WHERE topic_name = #{topic} AND lease_owner = #{owner}`,
		dialect.HWMAdvance: `UPDATE ${high_water_mark_store_table} SET high_water_mark = #{mark}, pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + now + ` AND high_water_mark < #{mark}`,
		// Plain read: see Catalogue for its behaviour with and without
		// READ_COMMITTED_SNAPSHOT.
		dialect.CommittedEnd: `SELECT val FROM ${position_table} WHERE id = 1`,
		dialect.DatabaseNow:  `SELECT ` + now,
	}
}
