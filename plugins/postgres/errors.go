package postgres

import "github.com/tidemarkdb/tidemark/core/dialect"

// errorRules maps PostgreSQL's SQLSTATEs to the core's classes. An unnamed
// primary key is <table>_pkey; pgx and lib/pq carry the constraint name in
// the error, which tells a duplicate event id from a sequence conflict.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
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
	}
}
