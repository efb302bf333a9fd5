package dialect

import (
	"context"
	"strings"
)

// This file is the SDK base of a third-party dialect: ANSI returns a
// catalogue written in ANSI SQL for everything that is not engine-specific,
// and Base serves a catalogue as a Dialect. A plugin author starts from
// ANSI(), overrides what the engine does differently, and serves the result:
//
//	func Catalogue() dialect.Catalogue {
//	    c := dialect.ANSI()
//	    c.Identity.Name = "mydb"
//	    // … identity, DDL, an error rule for duplicate event ids, overrides …
//	    return c
//	}
//
//	func main() { plugin.Serve(&dialect.Base{Catalogue: mydb.Catalogue()}) }
//
// docs/writing-a-dialect.md walks through it end to end; the conformance
// suite (package conformance) tells whether the result is right.

// EventColumns is the column list of the event tables in the order every
// event read must return them (see the Reads statements); ANSI's
// EventInsert writes them in the same order.
const EventColumns = `id, aggregate_id, aggregate_type, sequence_no, event_type, event_revision, payload, metadata, occurred_at, partition_key, global_position`

// ansiNow is the database clock of the ANSI catalogue: CURRENT_TIMESTAMP,
// TIMESTAMP WITH TIME ZONE in the standard. Some engines fix it for the
// duration of a transaction (H2) or per statement; the lease statements only
// need it to be the database's clock, not the application's.
const ansiNow = `CURRENT_TIMESTAMP`

// ansiLeaseExpiry is the lease expiry of HWMAcquire: the database clock plus
// #{lease_millis} milliseconds, as standard interval arithmetic. The CAST
// gives the bind a type: without it H2 and HSQLDB cannot type "? * INTERVAL"
// (H2: "Feature not supported: UNKNOWN * INTERVAL SECOND"). It runs as
// written on H2 2.1, HSQLDB 2.7 and PostgreSQL 15; most other engines
// override HWMAcquire with their own date arithmetic (plugins/mysql:
// UTC_TIMESTAMP(6) + INTERVAL (#{lease_millis} * 1000) MICROSECOND;
// plugins/sqlserver: DATEADD(millisecond, CAST(#{lease_millis} AS INT),
// SYSUTCDATETIME()); H2 and HSQLDB also accept TIMESTAMPADD).
const ansiLeaseExpiry = ansiNow + ` + CAST(#{lease_millis} AS BIGINT) * INTERVAL '0.001' SECOND`

// ANSI returns a catalogue with ANSI SQL defaults for everything that is not
// engine-specific. It is a starting point, not a working dialect: loaded as
// it is, the catalogue check names what is missing (a name, DDL, a
// duplicate-event-id rule, the index query). Each call returns a fresh
// catalogue (new maps and slices) that the caller may modify freely.
//
// # Identity and positions
//
// ContractVersion, placeholder "?", identifier quotes `"`,
// MaxIdentifierLength 128 (the standard's), unquoted identifiers folded to
// upper case. The author sets Name, Version, ServerVersions, DriverName,
// Drivers and DSNHint, and corrects the rest where the engine differs
// (PostgreSQL: "$1" placeholders, 63 characters, folds to lower case).
//
// Positions is CounterRow, the strategy every engine can implement: a
// single-row counter table per position object, incremented by the appending
// transaction and held locked until it commits, restored by a rollback. An
// engine with transaction ids and a reliable "oldest running transaction"
// (PostgreSQL) may use SequenceXIDHorizon instead and must then supply the
// sequence statements of RequiredStatements.
//
// # Scripts
//
// The standard script list (StandardScripts) with no statements. DDL is not
// portable enough to default (UUID and large-text types, IF NOT EXISTS,
// counter tables versus sequences), so the author supplies it:
//
//	c.Scripts = dialect.Scripts(dialect.ObjectTable, myDDL) // script name → statements
//
// starting from a reference plugin's DDL (plugins/h2/ddl*.go is the closest
// to ANSI) or from `tidemark schema --dialect h2 --format template`, which
// prints it with its ${…} placeholders.
//
// # Statements
//
// Every statement of RequiredStatements(CounterRow), plus PositionAllocated:
// MERGE … WHEN NOT MATCHED THEN INSERT seeds (never overwriting), FETCH
// FIRST … ROWS ONLY paging, CURRENT_TIMESTAMP as the clock, leases as
// CURRENT_TIMESTAMP + CAST(#{lease_millis} AS BIGINT) * INTERVAL '0.001'
// SECOND, and the counter as UPDATE … SET val = val + #{count} WHERE id = 1
// followed by PositionAllocated's SELECT val. The event insert is a
// multi-row INSERT … VALUES (…), (…) of EventColumns with positions bound by
// the core. Locks are " FOR UPDATE", no SKIP LOCKED.
//
// Engines commonly override the seeds (INSERT … ON CONFLICT DO NOTHING,
// INSERT IGNORE), the paging (LIMIT, TOP), the clock and the lease
// arithmetic (the ANSI form runs on H2, HSQLDB and PostgreSQL; MySQL needs
// UTC_TIMESTAMP(6) + INTERVAL (#{lease_millis} * 1000) MICROSECOND, SQL
// Server DATEADD(millisecond, …, SYSUTCDATETIME())), and fold
// PositionAllocate and PositionAllocated into one statement that returns
// the new value (RETURNING, FINAL TABLE, OUTPUT), deleting
// PositionAllocated. LimitPaging and LeaseStatements write the two most
// common of these overrides; every built-in plugin (plugins/*) is ANSI()
// plus its differences, in the same files (docs/writing-a-dialect.md, "One
// layout for every plugin").
//
// # Errors
//
// Rules on standard SQLSTATEs only: 23505 unique, 23503 foreign key, 23502
// not null, 25006 read-only transaction, 40001 serialization failure, 40P01 deadlock (PostgreSQL's), 57014 canceled,
// 42S02 and 42P01 undefined table, 08* connection lost. Rules are tried in
// order and the first match wins, so engine-specific rules go in front:
//
//	c.Errors = append([]dialect.ErrorRule{
//		{Class: dialect.ErrDuplicateEventID, SQLState: "23505", MessagePattern: `…`},
//	}, c.Errors...)
//
// The standard cannot tell a violation of an event table's primary key (a
// duplicate event id) from one of UNIQUE (aggregate_id, sequence_no) (a
// concurrent append): both are 23505. That needs the engine's message or
// constraint names, so ANSI has no duplicate_event_id rule and the catalogue
// check fails until the dialect adds one. Give it a ConstraintPattern on the
// primary key's index or constraint NAME (core/sqlerr reads it from the
// driver or the message), not a message pattern on the words "primary key"
// (H2 says "Unique index or primary key violation" for both). Neither has the
// standard a code for a deadlock (H2, MySQL and SQL Server report 40001,
// classified here as a serialization failure) or a lock timeout (H2
// HYT00/50200, PostgreSQL 55P03, MySQL 1205): add the engine's.
//
// # Introspection and query columns
//
// INFORMATION_SCHEMA queries in CURRENT_SCHEMA for TableExists,
// SequenceExists and Columns (fractional-seconds precision of time columns
// in numeric_scale, nullable as 1 or 0). Indexes is empty: the standard has
// no INFORMATION_SCHEMA view of indexes, so every dialect supplies its own
// (H2: INFORMATION_SCHEMA.INDEX_COLUMNS; PostgreSQL: pg_index; MySQL:
// INFORMATION_SCHEMA.STATISTICS). Engines whose INFORMATION_SCHEMA differs
// override the others too (MySQL has no CURRENT_SCHEMA; HSQLDB reports
// primary-key columns as nullable).
//
// Query-table columns are VARCHAR(255), BIGINT,
// DECIMAL(${precision},${scale}), DATE, TIME(6), TIMESTAMP(6) (UTC, as the
// spec prescribes) and BOOLEAN, with CREATE [UNIQUE] INDEX IF NOT EXISTS.
// Engines without IF NOT EXISTS on indexes (SQL Server, Oracle, MySQL) use a
// plain CREATE INDEX and set IndexExists.
func ANSI() Catalogue {
	return Catalogue{
		Identity: Identity{
			ContractVersion:     ContractVersion,
			Placeholder:         PlaceholderQuestion,
			QuoteOpen:           `"`,
			QuoteClose:          `"`,
			MaxIdentifierLength: 128,
			FoldsUnquotedTo:     "upper",
		},
		Positions:  CounterRow,
		Scripts:    Scripts(ObjectTable, nil),
		Statements: ansiAreaStatements(), // each area: ansi_<area>.go, listed in areas
		EventInsert: RowInsert{
			Head: `INSERT INTO ${event_store_table} (` + EventColumns + `) VALUES `,
			Row:  `(#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{partition_key}, #{global_position})`,
		},
		CaptureInsert: RowInsert{
			Head: `INSERT INTO ${event_capture_records_table} (` + TopicColumns + `) VALUES `,
			Row:  `(#{id}, #{global_position}, #{partition_key}, #{event_type}, #{event_revision}, #{payload}, #{metadata}, #{occurred_at}, #{message_key})`,
		},
		ReadModelInsert: RowInsert{
			Head: `INSERT INTO ${read_model_capture_records_table} (` + ReadModelInsertColumns + `) VALUES `,
			Row:  `(#{id}, #{topic}, #{topic_position}, #{partition_key}, #{read_model_key}, #{read_model_type}, #{payload}, #{metadata}, #{cascade_depth}, #{deleted}, #{occurred_at})`,
		},
		Locks:         LockForms{ForUpdate: " FOR UPDATE", Now: ansiNow},
		Errors:        ansiErrorRules(),
		Introspection: ansiIntrospection(),
		QueryColumns:  ansiQueryColumns(),
		Naming:        Naming{ReservedWords: SQLReservedWords()},
	}
}

// SQLReservedWords returns the reserved words of SQL:2016 that have the
// shape of an identifier: ANSI's Naming.ReservedWords. Engines reserve
// fewer (PostgreSQL about 100, SQLite about 60) or others (MySQL's LIMIT,
// H2's ROWNUM); a dialect declares the words its engine actually refuses,
// which the conformance test schema/naming_reserved_words_declared checks.
func SQLReservedWords() []string {
	return strings.Fields(sqlReservedWords)
}

const sqlReservedWords = `
ABS ACOS ALL ALLOCATE ALTER AND ANY ARE ARRAY ARRAY_AGG ARRAY_MAX_CARDINALITY AS ASENSITIVE ASIN
ASYMMETRIC AT ATAN ATOMIC AUTHORIZATION AVG BEGIN BEGIN_FRAME BEGIN_PARTITION BETWEEN BIGINT BINARY
BLOB BOOLEAN BOTH BY CALL CALLED CARDINALITY CASCADED CASE CAST CEIL CEILING CHAR CHAR_LENGTH
CHARACTER CHARACTER_LENGTH CHECK CLASSIFIER CLOB CLOSE COALESCE COLLATE COLLECT COLUMN COMMIT
CONDITION CONNECT CONSTRAINT CONTAINS CONVERT COPY CORR CORRESPONDING COS COSH COUNT COVAR_POP
COVAR_SAMP CREATE CROSS CUBE CUME_DIST CURRENT CURRENT_CATALOG CURRENT_DATE
CURRENT_DEFAULT_TRANSFORM_GROUP CURRENT_PATH CURRENT_ROLE CURRENT_ROW CURRENT_SCHEMA CURRENT_TIME
CURRENT_TIMESTAMP CURRENT_TRANSFORM_GROUP_FOR_TYPE CURRENT_USER CURSOR CYCLE DATE DAY DEALLOCATE DEC
DECFLOAT DECIMAL DECLARE DEFAULT DEFINE DELETE DENSE_RANK DEREF DESCRIBE DETERMINISTIC DISCONNECT
DISTINCT DOUBLE DROP DYNAMIC EACH ELEMENT ELSE EMPTY END END_FRAME END_PARTITION EQUALS ESCAPE EVERY
EXCEPT EXEC EXECUTE EXISTS EXP EXTERNAL EXTRACT FALSE FETCH FILTER FIRST_VALUE FLOAT FLOOR FOR
FOREIGN FRAME_ROW FREE FROM FULL FUNCTION FUSION GET GLOBAL GRANT GROUP GROUPING GROUPS HAVING HOLD
HOUR IDENTITY IN INDICATOR INITIAL INNER INOUT INSENSITIVE INSERT INT INTEGER INTERSECT INTERSECTION
INTERVAL INTO IS JOIN JSON_ARRAY JSON_ARRAYAGG JSON_EXISTS JSON_OBJECT JSON_OBJECTAGG JSON_QUERY
JSON_TABLE JSON_TABLE_PRIMITIVE JSON_VALUE LAG LANGUAGE LARGE LAST_VALUE LATERAL LEAD LEADING LEFT
LIKE LIKE_REGEX LISTAGG LN LOCAL LOCALTIME LOCALTIMESTAMP LOG LOG10 LOWER MATCH MATCH_NUMBER
MATCH_RECOGNIZE MATCHES MAX MEMBER MERGE METHOD MIN MINUTE MOD MODIFIES MODULE MONTH MULTISET
NATIONAL NATURAL NCHAR NCLOB NEW NO NONE NORMALIZE NOT NTH_VALUE NTILE NULL NULLIF NUMERIC
OCCURRENCES_REGEX OCTET_LENGTH OF OFFSET OLD OMIT ON ONE ONLY OPEN OR ORDER OUT OUTER OVER OVERLAPS
OVERLAY PARAMETER PARTITION PATTERN PER PERCENT PERCENT_RANK PERCENTILE_CONT PERCENTILE_DISC PERIOD
PORTION POSITION POSITION_REGEX POWER PRECEDES PRECISION PREPARE PRIMARY PROCEDURE PTF RANGE RANK
READS REAL RECURSIVE REF REFERENCES REFERENCING REGR_AVGX REGR_AVGY REGR_COUNT REGR_INTERCEPT
REGR_R2 REGR_SLOPE REGR_SXX REGR_SXY REGR_SYY RELEASE RESULT RETURN RETURNS REVOKE RIGHT ROLLBACK
ROLLUP ROW ROW_NUMBER ROWS RUNNING SAVEPOINT SCOPE SCROLL SEARCH SECOND SEEK SELECT SENSITIVE
SESSION_USER SET SHOW SIMILAR SIN SINH SKIP SMALLINT SOME SPECIFIC SPECIFICTYPE SQL SQLEXCEPTION
SQLSTATE SQLWARNING SQRT START STATIC STDDEV_POP STDDEV_SAMP SUBMULTISET SUBSET SUBSTRING
SUBSTRING_REGEX SUCCEEDS SUM SYMMETRIC SYSTEM SYSTEM_TIME SYSTEM_USER TABLE TABLESAMPLE TAN TANH
THEN TIME TIMESTAMP TIMEZONE_HOUR TIMEZONE_MINUTE TO TRAILING TRANSLATE TRANSLATE_REGEX TRANSLATION
TREAT TRIGGER TRIM TRIM_ARRAY TRUE TRUNCATE UESCAPE UNION UNIQUE UNKNOWN UNNEST UPDATE UPPER USER
USING VALUE VALUES VALUE_OF VAR_POP VAR_SAMP VARBINARY VARCHAR VARYING VERSIONING WHEN WHENEVER
WHERE WIDTH_BUCKET WINDOW WITH WITHIN WITHOUT YEAR
`

// ansiStatements returns the statements of RequiredStatements(CounterRow),
// plus PositionAllocated, in ANSI SQL. Each StatementID's doc comment is the
// contract an override must keep; the notes here say why the ANSI form
// keeps it and where engines differ.
func ansiStatements() map[StatementID]string {
	lease := LeaseStatements(ansiNow, ansiLeaseExpiry)
	return map[StatementID]string{
		// Seeds: MERGE inserts the row only when it is missing and never
		// overwrites it. The CASTs type the binds inside VALUES. MERGE is not
		// safe against a concurrent insert of the same key on every engine;
		// the core treats a unique violation of a seed as "someone else
		// seeded it", so that is harmless.
		PartitionSeed: `MERGE INTO ${partition_metadata_table} t USING (VALUES (1, CAST(#{partitions} AS INTEGER))) AS s (id, partitions) ON t.id = s.id ` +
			`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`,
		PartitionRead: `SELECT partitions FROM ${partition_metadata_table} WHERE id = 1`,
		PositionSeed: `MERGE INTO ${position_table} t USING (VALUES (1, 0)) AS s (id, val) ON t.id = s.id ` +
			`WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)`,

		// The counter: the UPDATE takes the row's write lock, which every
		// engine holds until the transaction ends, so concurrent appends
		// queue here, positions are handed out in commit order, and a
		// rollback restores the counter (no gap). The SELECT then reads this
		// transaction's own write. An engine whose plain SELECT … FOR UPDATE
		// does not serialise writers (HSQLDB in MVCC mode) must keep the
		// UPDATE as the lock, as here.
		PositionAllocate:  `UPDATE ${position_table} SET val = val + #{count} WHERE id = 1`,
		PositionAllocated: `SELECT val FROM ${position_table} WHERE id = 1`,

		StreamVersion: `SELECT sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY sequence_no DESC FETCH FIRST 1 ROW ONLY`,
		// One branch per id, each two probes of the unique (aggregate_id,
		// sequence_no) index: the id's MAX (an index's last entry under the
		// id on every engine) and that row. The former IN list under GROUP
		// BY read every row of every stream asked (PostgreSQL planned it as
		// a scan of the whole table). UNION: the ids the core repeats to fill
		// the binds give one row.
		StreamVersions:      streamVersionsUnion(),
		EventStream:         `SELECT ` + EventColumns + ` FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND sequence_no > #{after_sequence} ORDER BY sequence_no`,
		EventRange:          `SELECT ` + EventColumns + ` FROM ${event_store_table} WHERE global_position > #{after} AND global_position <= #{upto} ORDER BY global_position FETCH FIRST #{limit} ROWS ONLY`,
		EventPartitionRange: `SELECT ` + EventColumns + ` FROM ${event_store_table} WHERE partition_key = #{partition} AND global_position > #{after} AND global_position <= #{upto} ORDER BY global_position FETCH FIRST #{limit} ROWS ONLY`,
		SnapshotInsert:      `INSERT INTO ${aggregate_snapshots_table} (id, aggregate_id, aggregate_type, sequence_no, snapshot_version, payload, created_at) VALUES (#{id}, #{aggregate_id}, #{aggregate_type}, #{sequence_no}, #{snapshot_version}, #{payload}, #{created_at})`,
		SnapshotLatest:      `SELECT sequence_no, payload, created_at FROM ${aggregate_snapshots_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type} AND snapshot_version = #{snapshot_version} ORDER BY sequence_no DESC FETCH FIRST 1 ROW ONLY`,

		HWMSeed: `MERGE INTO ${high_water_mark_store_table} t USING (VALUES (CAST(#{topic} AS VARCHAR(255)), 0, 0)) AS s (topic_name, high_water_mark, topic_start) ON t.topic_name = s.topic_name ` +
			`WHEN NOT MATCHED THEN INSERT (topic_name, high_water_mark, topic_start) VALUES (s.topic_name, s.high_water_mark, s.topic_start)`,
		HWMRead:    `SELECT high_water_mark, pending_end, pending_horizon, lease_owner FROM ${high_water_mark_store_table} WHERE topic_name = #{topic}`,
		HWMAcquire: lease[HWMAcquire],
		HWMRelease: `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL, lease_expires_at = NULL WHERE topic_name = #{topic} AND lease_owner = #{owner}`,
		HWMAdvance: lease[HWMAdvance],
		// A plain read must see the last committed value without waiting for
		// the append that holds the row (true of every MVCC engine; an engine
		// whose reads block on writers must say how to avoid it).
		CommittedEnd: `SELECT val FROM ${position_table} WHERE id = 1`,
		// VALUES is the standard query without a table; SELECT without FROM
		// is not ANSI (HSQLDB refuses it), FROM DUAL is Oracle's.
		DatabaseNow: `VALUES (` + ansiNow + `)`,
	}
}

// LeaseStatements returns the two statements that hold a lease on the
// database clock, HWMAcquire and HWMAdvance, in ANSI's text with the
// engine's clock expression now and its lease expiry (now plus
// #{lease_millis} milliseconds) put in. Leases are computed on the database
// clock only, never the application's. An engine whose clock or date
// arithmetic differs from ANSI's sets both with it:
//
//	maps.Copy(c.Statements, dialect.LeaseStatements(`UTC_TIMESTAMP(6)`,
//		`UTC_TIMESTAMP(6) + INTERVAL (#{lease_millis} * 1000) MICROSECOND`))
func LeaseStatements(now, leaseExpiry string) map[StatementID]string {
	return map[StatementID]string{
		HWMAcquire: `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + leaseExpiry +
			` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < ` + now + `)`,
		HWMAdvance: `UPDATE ${high_water_mark_store_table} SET high_water_mark = #{mark}, pending_end = NULL, pending_horizon = NULL ` +
			`WHERE topic_name = #{topic} AND lease_owner = #{owner} AND lease_expires_at >= ` + now + ` AND high_water_mark < #{mark}`,
	}
}

// LimitPaging rewrites ANSI's paging in place, for engines that page with
// LIMIT (PostgreSQL, MySQL, MariaDB, SQLite): a statement ending in
// "FETCH FIRST 1 ROW ONLY" ends in "LIMIT 1" instead, and one ending in
// "FETCH FIRST #{limit} ROWS ONLY" in "LIMIT #{limit}". Other statements
// are left as they are.
func LimitPaging(st map[StatementID]string) {
	for id, sql := range st {
		for ansi, limit := range map[string]string{
			` FETCH FIRST 1 ROW ONLY`:         ` LIMIT 1`,
			` FETCH FIRST #{limit} ROWS ONLY`: ` LIMIT #{limit}`,
		} {
			if strings.HasSuffix(sql, ansi) {
				st[id] = strings.TrimSuffix(sql, ansi) + limit
			}
		}
	}
}

// ansiErrorRules returns the rules on standard SQLSTATEs (see ANSI, Errors).
// 40P01 is PostgreSQL's deadlock code (and its derivatives'); 42S02 is
// ODBC's "base table not found" (MySQL, SQL Server, H2), 42P01 PostgreSQL's.
func ansiErrorRules() []ErrorRule {
	return []ErrorRule{
		{Class: ErrUniqueViolation, SQLState: "23505"},
		{Class: ErrForeignKeyViolation, SQLState: "23503"},
		{Class: ErrNotNullViolation, SQLState: "23502"},
		{Class: ErrReadOnly, SQLState: "25006"},
		{Class: ErrSerializationFailure, SQLState: "40001"},
		{Class: ErrDeadlock, SQLState: "40P01"},
		{Class: ErrQueryCanceled, SQLState: "57014"},
		{Class: ErrUndefinedTable, SQLState: "42S02"},
		{Class: ErrUndefinedTable, SQLState: "42P01"},
		{Class: ErrConnectionLost, SQLState: "08*"},
		{Class: ErrDuplicateObject, SQLState: "42S01"}, // ODBC: base table exists
		{Class: ErrDuplicateObject, SQLState: "42S11"}, // ODBC: index exists
		{Class: ErrDuplicateObject, SQLState: "42P07"}, // PostgreSQL: duplicate table
		{Class: ErrDuplicateObject, SQLState: "42710"}, // PostgreSQL: duplicate object
	}
}

// ansiIntrospection returns INFORMATION_SCHEMA queries restricted to
// CURRENT_SCHEMA, binding names as stored (see Identity.FoldsUnquotedTo).
// Indexes is left empty (see ANSI).
func ansiIntrospection() Introspection {
	return Introspection{
		TableExists: `SELECT 1 FROM INFORMATION_SCHEMA.TABLES
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table} AND TABLE_TYPE = 'BASE TABLE'`,
		SequenceExists: `SELECT 1 FROM INFORMATION_SCHEMA.SEQUENCES
WHERE SEQUENCE_SCHEMA = CURRENT_SCHEMA AND SEQUENCE_NAME = #{sequence}`,
		Columns: `SELECT COLUMN_NAME, UPPER(DATA_TYPE) AS DATA_TYPE,
       CHARACTER_MAXIMUM_LENGTH AS CHAR_LENGTH, NUMERIC_PRECISION,
       COALESCE(NUMERIC_SCALE, DATETIME_PRECISION) AS NUMERIC_SCALE,
       CASE WHEN IS_NULLABLE = 'YES' THEN 1 ELSE 0 END AS NULLABLE
FROM INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table}
ORDER BY ORDINAL_POSITION`,
	}
}

// ansiQueryColumns returns the standard's column types and guarded index
// statements. CREATE INDEX itself is not in the standard; the IF NOT EXISTS
// form is the common one (H2, HSQLDB, PostgreSQL, SQLite, MariaDB).
func ansiQueryColumns() QueryColumnTypes {
	return QueryColumnTypes{
		Types: map[QueryFieldKind]string{
			KindText:    "VARCHAR(255)",
			KindInteger: "BIGINT",
			KindDecimal: "DECIMAL(${precision},${scale})",
			KindDate:    "DATE",
			KindTime:    "TIME(6)",
			KindInstant: "TIMESTAMP(6)",
			KindBoolean: "BOOLEAN",
		},
		Column:      "${column} ${type}",
		Index:       "CREATE INDEX IF NOT EXISTS idx_${query_table}_${column} ON ${query_table} (${column})",
		UniqueIndex: "CREATE UNIQUE INDEX IF NOT EXISTS idx_${query_table}_${column} ON ${query_table} (${column})",
	}
}

// Base is a Dialect that describes a fixed catalogue. A plugin whose
// catalogue is plain data (the usual case) needs nothing else:
//
//	func main() { plugin.Serve(&dialect.Base{Catalogue: mydb.Catalogue()}) }
//
// Embed it to add behaviour, e.g. a type of your own with a constructor:
//
//	type MyDB struct{ dialect.Base }
//
//	func New() *MyDB { return &MyDB{dialect.Base{Catalogue: Catalogue()}} }
//
// Describe must stay deterministic and must not touch a database: the core
// calls it once at load and caches the answer.
type Base struct {
	// Catalogue is what Describe returns, typically ANSI() with overrides.
	Catalogue Catalogue
}

var _ Dialect = (*Base)(nil)

// Describe returns b.Catalogue. The catalogue is validated by the host at
// load (contract version, a name) and checked in full by the conformance
// suite.
func (b *Base) Describe(context.Context, DescribeRequest) (DescribeResponse, error) {
	return DescribeResponse{Catalogue: b.Catalogue}, nil
}

// streamVersionsUnion is StreamVersions: one UNION branch per bind.
func streamVersionsUnion() string {
	branches := make([]string, len(StreamVersionsBinds))
	for i, b := range StreamVersionsBinds {
		branches[i] = `SELECT aggregate_id, sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{` + b +
			`} AND sequence_no = (SELECT MAX(sequence_no) FROM ${event_store_table} WHERE aggregate_id = #{` + b + `})`
	}
	return strings.Join(branches, ` UNION `)
}

// StreamVersionsTopRows is StreamVersions as one parenthesised top-1 read
// per bind, ordered by orderBy (FETCH FIRST 1 ROW ONLY): for an engine that
// reads the last index entry under an id only in a given order (HSQLDB
// reads the unique (aggregate_id, sequence_no) index backwards for
// "aggregate_id DESC, sequence_no DESC"; H2 reads a descending index
// forwards for "aggregate_id, sequence_no DESC"), where ANSI's per-id MAX
// scans the id's range. UNION, not UNION ALL: the ids the core repeats to
// fill the binds give one row.
func StreamVersionsTopRows(orderBy string) string {
	branches := make([]string, len(StreamVersionsBinds))
	for i, b := range StreamVersionsBinds {
		branches[i] = `(SELECT aggregate_id, sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{` + b +
			`} ORDER BY ` + orderBy + ` FETCH FIRST 1 ROW ONLY)`
	}
	return strings.Join(branches, ` UNION `)
}

// StreamVersionTopRow is StreamVersion ordered by orderBy (see
// StreamVersionsTopRows).
func StreamVersionTopRow(orderBy string) string {
	return `SELECT sequence_no, aggregate_type FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} ORDER BY ` +
		orderBy + ` FETCH FIRST 1 ROW ONLY`
}
