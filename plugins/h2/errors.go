package h2

import "github.com/tidemarkdb/tidemark/core/dialect"

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
