package hsqldb

import "github.com/tidemarkdb/tidemark/core/dialect"

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
		// -4872 too, but ended by the JDBC bridge's watchdog, not by the caller: a lock wait
		// on a transaction that had already ended (HSQLDB lost the wake-up); a retry succeeds.
		{Class: dialect.ErrLockTimeout, SQLState: "40502", MessagePattern: `jdbcbridge: stale lock wait aborted`},
		{Class: dialect.ErrQueryCanceled, SQLState: "40502"}, // -4872, a cancelled lock wait
		{Class: dialect.ErrQueryCanceled, VendorCode: -4873}, // statement timeout
		{Class: dialect.ErrUndefinedTable, SQLState: "42501", VendorCode: -5501, MessagePattern: `object not found`},
		{Class: dialect.ErrConnectionLost, SQLState: "08*"},
		// -1252: a prepared statement whose table was dropped or altered.
		{Class: dialect.ErrStatementInvalidated, SQLState: "07502"},
		{Class: dialect.ErrDuplicateObject, SQLState: "42504"}, // -5504 object name already exists
	}
}
