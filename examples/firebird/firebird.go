// Package firebird is a second worked example of a third-party Tidemark
// dialect: Firebird 3 through the pure-Go driver
// github.com/nakagami/firebirdsql. Unlike examples/mydialect it borrows
// nothing from the built-in plugins: it starts from dialect.ANSI(), brings
// its own DDL (ddl.go) and overrides what Firebird does differently.
//
// It passes the whole conformance suite (tests whose feature Firebird 3
// lacks skip by the suite's own reasoning). firebird_test.go runs the suite
// out of process, on a Firebird 3 server the conformance harness starts.
package firebird

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// DriverName is the database/sql name of github.com/nakagami/firebirdsql
// behind the guard of package fbdriver (import it to register the name):
// unguarded, a transaction that fails to begin leaves a connection that
// panics the process on its next use or close.
const DriverName = "firebirdsql-guarded"

// DSNOptions are the driver options the dialect relies on, appended to a
// DSN without options. cancel_hard_drop: a canceled context makes the
// driver send op_cancel, which Firebird does not apply to every wait (a
// lock wait; measured: a stopped high-water-mark advancer whose Run never
// returned, hwm/stop_is_not_failure); with it the driver closes the socket
// when the read has not returned 3 s (its default grace) after the cancel,
// and database/sql discards the connection, so a cancel always returns.
const DSNOptions = "?cancel_hard_drop=true"

// New returns the dialect, ready for plugin.Serve.
func New() *dialect.Base { return &dialect.Base{Catalogue: Catalogue()} }

// Catalogue is dialect.ANSI() with Firebird 3's identity, DDL and
// differences.
func Catalogue() dialect.Catalogue {
	c := dialect.ANSI()

	c.Identity.Name = "firebird"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "Firebird 3.0 (3.0.11 tested), SQL dialect 3, UTF8 database"
	c.Identity.DriverName = DriverName
	c.Identity.Drivers = []string{DriverName, "firebirdsql"}
	c.Identity.DSNHint = "SYSDBA:password@127.0.0.1:3050/var/lib/firebird/3.0/data/app.fdb" + DSNOptions
	// 31 bytes in Firebird 3 (63 characters from Firebird 4).
	c.Identity.MaxIdentifierLength = 31
	// Firebird 3 has no multi-row VALUES: one row per INSERT.
	c.EventInsert.MaxRows = 1
	c.CaptureInsert.MaxRows = 1
	c.ReadModelInsert.MaxRows = 1
	// The counter's retry (positionAllocate) is sound only in READ
	// COMMITTED: declared, not left to the driver's default.
	// ReadWriteReads: firebirdsql runs a connection's autocommit statements
	// with the parameters of its last transaction, so a read-only one would
	// make the next write on that connection fail.
	c.Isolation = dialect.Isolation{Append: dialect.IsolationReadCommitted, HWM: dialect.IsolationReadCommitted, ReadWriteReads: true}
	// The DDL guards (EXECUTE BLOCK) hold ";" inside their bodies: tools
	// that split a script must split on something else. isql and Flyway
	// use SET TERM; "^" is the customary choice.
	c.Identity.StatementTerminator = "\n^"

	// Index names live apart from table names (RDB$INDICES); words refused
	// as names beyond SQL:2016's, found by schema/naming_reserved_words_declared.
	c.Naming.IndexScope = dialect.IndexScopeSchema
	// The spec's derived names go to 40 characters: those over 31 are
	// shortened by the core's rule (a prefix and 8 hex digits of a hash),
	// the same in the DDL, the guards and every check.
	c.Naming.Shorten = dialect.ShortenHash
	c.Naming.ReservedWords = append(dialect.SQLReservedWords(), "ADD", "INDEX", "VIEW", "_ROWID_")

	// Firebird 3 compares VARCHAR with PAD SPACE ("acc-1 " = "acc-1", seen
	// in keys/trailing_space_distinct_streams): keys ending in a space are
	// refused before any SQL.
	c.KeysIgnoreTrailingSpaces = true
	// TIMESTAMP keeps 1/10000 s (4 digits); DECIMAL and NUMERIC stop at 18.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 4, InstantDigits: 4, MaxDecimalPrecision: 18}

	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Errors = append(errorRules(), c.Errors...)
	c.Introspection = introspection()
	c.QueryColumns = queryColumns()
	c.Locks.Now = "CURRENT_TIMESTAMP"

	st := c.Statements
	for id, q := range consumerStatements() { // POSITION is reserved: the quoted forms
		st[id] = q
	}
	for id, q := range leaseStatements() { // DATEADD expiry, WITH LOCK fence
		st[id] = q
	}
	for id, q := range dialect.SagaStatements(`CURRENT_TIMESTAMP`, `DATEADD(CAST(#{lease_millis} AS BIGINT) MILLISECOND TO CURRENT_TIMESTAMP)`) {
		st[id] = q
	}
	// Seeds: MERGE exists, VALUES as a table does not: select from the
	// one-row system table instead.
	st[dialect.PartitionSeed] = `MERGE INTO ${partition_metadata_table} t USING (SELECT 1 AS id, CAST(#{partitions} AS INTEGER) AS partitions FROM RDB$DATABASE) s ON t.id = s.id ` +
		`WHEN NOT MATCHED THEN INSERT (id, partitions) VALUES (s.id, s.partitions)`
	st[dialect.PositionSeed] = `MERGE INTO ${position_table} t USING (SELECT 1 AS id, 0 AS val FROM RDB$DATABASE) s ON t.id = s.id ` +
		`WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)`
	st[dialect.HWMSeed] = `MERGE INTO ${high_water_mark_store_table} t USING (SELECT CAST(#{topic} AS VARCHAR(255)) AS topic_name FROM RDB$DATABASE) s ON t.topic_name = s.topic_name ` +
		`WHEN NOT MATCHED THEN INSERT (topic_name, high_water_mark, topic_start) VALUES (s.topic_name, 0, 0)`

	st[dialect.PositionAllocate] = positionAllocate
	delete(st, dialect.PositionAllocated)
	st[dialect.RMTopicSeed] = `MERGE INTO ${read_model_capture_positions_table} t USING (SELECT CAST(#{topic} AS VARCHAR(255)) AS topic FROM RDB$DATABASE) s ON t.topic = s.topic ` +
		`WHEN NOT MATCHED THEN INSERT (topic, val) VALUES (s.topic, 0)`
	st[dialect.RMTopicAllocate] = rmTopicAllocate
	delete(st, dialect.RMTopicAllocated)

	// Lease expiry: DATEADD instead of interval arithmetic.
	expiry := `DATEADD(CAST(#{lease_millis} AS BIGINT) MILLISECOND TO CURRENT_TIMESTAMP)`
	st[dialect.HWMAcquire] = `UPDATE ${high_water_mark_store_table} SET lease_owner = #{owner}, lease_expires_at = ` + expiry +
		` WHERE topic_name = #{topic} AND (lease_owner IS NULL OR lease_owner = #{owner} OR lease_expires_at IS NULL OR lease_expires_at < CURRENT_TIMESTAMP)`
	st[dialect.DatabaseNow] = `SELECT CURRENT_TIMESTAMP FROM RDB$DATABASE`
	return c
}

// positionAllocate is the counter on a first-updater-wins engine. In READ
// COMMITTED (the driver's default: read_committed, rec_version, wait) an
// UPDATE of the counter row waits for the append holding it, and when that
// append COMMITS the waiter gets "update conflicts with concurrent update"
// (GDS 335544451, SQLSTATE 40001) instead of PostgreSQL's re-read. Here the
// UPDATE runs in a PSQL loop: a conflict (whose primary code, the one PSQL's
// GDSCODE sees, is isc_deadlock) undoes only the failed UPDATE
// (the WHEN handler's implicit savepoint), and the retry reads the newly
// committed value and takes the row. The lock is then held to the end of
// the caller's transaction, as the contract asks. 100 attempts bound the
// loop: in a SNAPSHOT transaction every retry conflicts again, and the
// error must reach the caller instead of spinning. The contract has no
// "lock, then update" counter form and no declared isolation level: see
// README.md.
const positionAllocate = `EXECUTE BLOCK (n BIGINT = #{count}) RETURNS (v BIGINT) AS
DECLARE tries INTEGER = 0;
BEGIN
  WHILE (TRUE) DO
  BEGIN
    tries = tries + 1;
    BEGIN
      UPDATE ${position_table} SET val = val + :n WHERE id = 1 RETURNING val INTO :v;
      LEAVE;
      WHEN GDSCODE deadlock DO
      BEGIN
        IF (tries >= 100) THEN EXCEPTION;
      END
    END
  END
  SUSPEND;
END`

// errorRules are Firebird's GDS codes (the driver's FbError.GDSCodes, a
// status vector the core reads whole). Firebird reports SQLSTATE 23000 for
// every integrity violation and 40001 for deadlocks, update conflicts and
// lock conflicts alike, so the codes, not the states, classify.
func errorRules() []dialect.ErrorRule {
	const (
		iscUniqueKeyViolation = 335544665 // violation of PRIMARY or UNIQUE KEY constraint "X" on table "T"
		iscNoDup              = 335544349 // attempt to store duplicate value in unique index "X"
		iscForeignKey         = 335544466 // violation of FOREIGN KEY constraint
		iscNotValid           = 335544347 // validation error for column …, value "*** null ***"
		iscUpdateConflict     = 335544451 // update conflicts with concurrent update
		iscLockTimeout        = 335544510 // lock time-out on wait transaction
		iscLockConflict       = 335544345 // lock conflict on no wait transaction
		iscDeadlock           = 335544336 // deadlock
		iscReadOnlyTrans      = 335544361 // attempted update during read-only transaction
		iscDsqlRelationErr    = 335544580 // Table unknown
		iscNetworkError       = 335544721 // Unable to complete network request
		iscNetReadErr         = 335544726 // Error reading data from the connection
		iscNetWriteErr        = 335544727 // Error writing data to the connection
		iscShutdown           = 335544528 // database shutdown
		iscAttShutdown        = 335544856 // connection shutdown
		iscCancelled          = 335544794 // operation was cancelled
		iscRandom             = 335544382 // "@1": a message of the server's own, here "cannot update erased record"
		iscDynTableExists     = 336068740 // Table @1 already exists
		iscDynIndexExists     = 336068859 // Index @1 already exists
		iscDynSequenceExists  = 336068862 // Sequence @1 already exists
		iscIdxKeyErr          = 335544631 // too many keys defined for index @1
	)
	return []dialect.ErrorRule{
		// A CREATE of an object another process created first: each DDL
		// runs in its own (autonomous) transaction (ddl.go), so the loser
		// of a concurrent first start gets Firebird's own "already exists"
		// code, after the "unsuccessful metadata update" (335544351) and
		// "CREATE … failed" codes of the status vector.
		{Class: dialect.ErrDuplicateObject, VendorCode: iscDynTableExists},
		{Class: dialect.ErrDuplicateObject, VendorCode: iscDynIndexExists},
		{Class: dialect.ErrDuplicateObject, VendorCode: iscDynSequenceExists},
		// Two transactions creating one index name at once: the commit
		// that counts the index's segments finds the other's too and
		// reports "too many keys defined for index" (measured: 3 of 4
		// concurrent first starts, every round). Its only other cause is
		// an index of more than 16 columns, which no Tidemark DDL has (the
		// widest, the snapshot lookup, has 4). The core runs the step
		// again, and the guard then finds the winner's index.
		{Class: dialect.ErrDuplicateObject, VendorCode: iscIdxKeyErr},
		// The constraint name is in the message, but the driver renders
		// it unquoted ("constraint PK_EVENT_STORE on table EVENT_STORE"),
		// a shape the core does not cut names out of, so ConstraintPattern
		// never sees it: the message is matched instead.
		{Class: dialect.ErrDuplicateEventID, VendorCode: iscUniqueKeyViolation, MessagePattern: `KEY constraint "?PK_`},
		{Class: dialect.ErrUniqueViolation, VendorCode: iscUniqueKeyViolation},
		{Class: dialect.ErrUniqueViolation, VendorCode: iscNoDup},
		{Class: dialect.ErrForeignKeyViolation, VendorCode: iscForeignKey},
		{Class: dialect.ErrNotNullViolation, VendorCode: iscNotValid, MessagePattern: `\*\*\* null \*\*\*`},
		{Class: dialect.ErrLockTimeout, VendorCode: iscLockTimeout},
		{Class: dialect.ErrLockTimeout, VendorCode: iscLockConflict},
		// A true deadlock and a first-updater-wins update conflict arrive
		// with the same status vector, [335544336 deadlock, 335544451
		// update_conflict, 335544878 concurrent_transaction]: nothing
		// tells them apart, so both are classified by Firebird's primary
		// code, as deadlocks (transient either way). An update conflict
		// alone (no isc_deadlock first) is a serialization failure.
		{Class: dialect.ErrDeadlock, VendorCode: iscDeadlock},
		{Class: dialect.ErrSerializationFailure, VendorCode: iscUpdateConflict},
		// A DELETE of a row another transaction deleted and committed
		// while this one waited for it (a saga deadline's delivery racing
		// its cancel): first updater wins, as for an update conflict. A
		// new try reads the row gone and deletes nothing.
		// It arrives as isc_random with the text (measured on 3.0).
		{Class: dialect.ErrSerializationFailure, VendorCode: iscRandom, MessagePattern: `cannot update erased record`},
		// A read committed statement returns a row's BLOB id and the driver
		// fetches the BLOB after: when concurrent updates committed newer
		// versions of the row meanwhile, the version read and its BLOB may
		// already be garbage-collected (measured: 2 of 30 runs of four
		// writers updating one saga). Read again, the row is the newer one.
		// It arrives as isc_random with the text (measured on 3.0).
		{Class: dialect.ErrSerializationFailure, VendorCode: iscRandom, MessagePattern: `^BLOB not found`},
		{Class: dialect.ErrReadOnly, VendorCode: iscReadOnlyTrans},
		{Class: dialect.ErrUndefinedTable, VendorCode: iscDsqlRelationErr},
		{Class: dialect.ErrConnectionLost, VendorCode: iscNetworkError},
		{Class: dialect.ErrConnectionLost, VendorCode: iscNetReadErr},
		{Class: dialect.ErrConnectionLost, VendorCode: iscNetWriteErr},
		{Class: dialect.ErrConnectionLost, VendorCode: iscShutdown},
		{Class: dialect.ErrConnectionLost, VendorCode: iscAttShutdown},
		// The driver guard's verdict on a connection it broke (fbdriver).
		{Class: dialect.ErrConnectionLost, MessagePattern: `^driver: bad connection`},
		{Class: dialect.ErrQueryCanceled, VendorCode: iscCancelled},
	}
}

// introspection reads Firebird's system tables. Names are bound as stored:
// unquoted identifiers fold to upper case; RDB$ names are CHAR(31), padded,
// which "=" ignores and TRIM removes from results.
//
// Columns maps RDB$FIELD_TYPE to type names: 7/8/16 are SMALLINT, INTEGER,
// BIGINT, or NUMERIC/DECIMAL when RDB$FIELD_SUB_TYPE is 1/2 (scale stored
// negative); 14 CHAR, 37 VARCHAR, 261 BLOB, 12 DATE, 13 TIME, 35 TIMESTAMP,
// 23 BOOLEAN. Time types report 4 fractional digits: Firebird 3 stores
// 1/10000 s, whatever the declaration.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM RDB$RELATIONS
WHERE RDB$RELATION_NAME = #{table} AND RDB$VIEW_BLR IS NULL AND COALESCE(RDB$SYSTEM_FLAG, 0) = 0`,
		SequenceExists: `SELECT 1 FROM RDB$GENERATORS WHERE RDB$GENERATOR_NAME = #{sequence}`,
		Columns: `SELECT TRIM(rf.RDB$FIELD_NAME) AS COLUMN_NAME,
       CASE
         WHEN f.RDB$FIELD_TYPE IN (7, 8, 16) AND f.RDB$FIELD_SUB_TYPE = 1 THEN 'NUMERIC'
         WHEN f.RDB$FIELD_TYPE IN (7, 8, 16) AND f.RDB$FIELD_SUB_TYPE = 2 THEN 'DECIMAL'
         WHEN f.RDB$FIELD_TYPE = 7 THEN 'SMALLINT'
         WHEN f.RDB$FIELD_TYPE = 8 THEN 'INTEGER'
         WHEN f.RDB$FIELD_TYPE = 16 THEN 'BIGINT'
         WHEN f.RDB$FIELD_TYPE = 14 THEN 'CHAR'
         WHEN f.RDB$FIELD_TYPE = 37 THEN 'VARCHAR'
         WHEN f.RDB$FIELD_TYPE = 261 THEN 'BLOB'
         WHEN f.RDB$FIELD_TYPE = 12 THEN 'DATE'
         WHEN f.RDB$FIELD_TYPE = 13 THEN 'TIME'
         WHEN f.RDB$FIELD_TYPE = 35 THEN 'TIMESTAMP'
         WHEN f.RDB$FIELD_TYPE = 23 THEN 'BOOLEAN'
         WHEN f.RDB$FIELD_TYPE = 27 THEN 'DOUBLE PRECISION'
         WHEN f.RDB$FIELD_TYPE = 10 THEN 'FLOAT'
         ELSE 'TYPE ' || f.RDB$FIELD_TYPE
       END AS DATA_TYPE,
       CASE WHEN f.RDB$FIELD_TYPE IN (14, 37) THEN f.RDB$CHARACTER_LENGTH END AS COL_LENGTH,
       CASE WHEN f.RDB$FIELD_TYPE IN (7, 8, 16) AND f.RDB$FIELD_SUB_TYPE IN (1, 2) THEN f.RDB$FIELD_PRECISION END AS COL_PRECISION,
       CASE
         WHEN f.RDB$FIELD_TYPE IN (7, 8, 16) AND f.RDB$FIELD_SUB_TYPE IN (1, 2) THEN -f.RDB$FIELD_SCALE
         WHEN f.RDB$FIELD_TYPE IN (13, 35) THEN 4
       END AS COL_SCALE,
       CASE WHEN COALESCE(rf.RDB$NULL_FLAG, 0) = 0 AND COALESCE(f.RDB$NULL_FLAG, 0) = 0 THEN 1 ELSE 0 END AS COL_NULLABLE
FROM RDB$RELATION_FIELDS rf
JOIN RDB$FIELDS f ON f.RDB$FIELD_NAME = rf.RDB$FIELD_SOURCE
WHERE rf.RDB$RELATION_NAME = #{table}
ORDER BY rf.RDB$FIELD_POSITION`,
		Indexes: `SELECT TRIM(i.RDB$INDEX_NAME) AS INDEX_NAME, TRIM(s.RDB$FIELD_NAME) AS COLUMN_NAME,
       COALESCE(i.RDB$UNIQUE_FLAG, 0) AS IS_UNIQUE, s.RDB$FIELD_POSITION + 1 AS ORDINAL
FROM RDB$INDICES i
JOIN RDB$INDEX_SEGMENTS s ON s.RDB$INDEX_NAME = i.RDB$INDEX_NAME
WHERE i.RDB$RELATION_NAME = #{table}
ORDER BY 1, 4`,
	}
}

// queryColumns: Firebird 3's types, truthfully. DECIMAL stops at 18 digits
// (the suite's fixture asks for 38); TIME and TIMESTAMP take no precision
// and hold 4 fractional digits. Firebird 3 has CREATE INDEX but not its IF
// NOT EXISTS form: IndexExists guards it.
func queryColumns() dialect.QueryColumnTypes {
	return dialect.QueryColumnTypes{
		Types: map[dialect.QueryFieldKind]string{
			dialect.KindText:    "VARCHAR(255)",
			dialect.KindInteger: "BIGINT",
			dialect.KindDecimal: "DECIMAL(${precision},${scale})",
			dialect.KindDate:    "DATE",
			dialect.KindTime:    "TIME",
			dialect.KindInstant: "TIMESTAMP",
			dialect.KindBoolean: "BOOLEAN",
		},
		Column: "${column} ${type}",
		// In an autonomous transaction, as every CREATE of ddl.go: a
		// failed commit must not stay pending on the pooled connection.
		Index:       autonomous("CREATE INDEX idx_${query_table}_${column} ON ${query_table} (${column})"),
		UniqueIndex: autonomous("CREATE UNIQUE INDEX idx_${query_table}_${column} ON ${query_table} (${column})"),
		// The CAST keeps a name over 31 characters from failing the guard
		// with "string right truncation": CREATE INDEX then reports it.
		IndexExists: "SELECT 1 FROM RDB$INDICES WHERE RDB$RELATION_NAME = UPPER(#{table}) AND RDB$INDEX_NAME = UPPER(CAST(#{index} AS VARCHAR(128)))",
	}
}

// autonomous runs one DDL statement as ddl.go's guarded does: in its own
// transaction, one DDL at a time (the core checks QueryColumns.IndexExists
// first; this guard never matches).
func autonomous(stmt string) string {
	return guarded("SELECT 1 FROM RDB$DATABASE WHERE 1 = 0", stmt)
}

// rmTopicAllocate is positionAllocate on a read-model topic's row of the
// per-topic counter table.
const rmTopicAllocate = `EXECUTE BLOCK (n BIGINT = #{count}, tp VARCHAR(255) = #{topic}) RETURNS (v BIGINT) AS
DECLARE tries INTEGER = 0;
BEGIN
  WHILE (TRUE) DO
  BEGIN
    tries = tries + 1;
    BEGIN
      UPDATE ${read_model_capture_positions_table} SET val = val + :n WHERE topic = :tp RETURNING val INTO :v;
      LEAVE;
      WHEN GDSCODE deadlock DO
      BEGIN
        IF (tries >= 100) THEN EXCEPTION;
      END
    END
  END
  SUSPEND;
END`
