package sqlite

import "github.com/tidemarkdb/tidemark/core/dialect"

// errorRules maps SQLite's extended result codes to the core's classes.
// SQLite has no SQLSTATE.
func errorRules() []dialect.ErrorRule {
	return []dialect.ErrorRule{
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
	}
}
