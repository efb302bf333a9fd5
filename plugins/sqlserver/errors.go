package sqlserver

import "github.com/tidemarkdb/tidemark/core/dialect"

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
