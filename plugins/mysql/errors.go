package mysql

import "github.com/tidemarkdb/tidemark/core/dialect"

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
