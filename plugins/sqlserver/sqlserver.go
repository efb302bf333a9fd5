// Package sqlserver is the Tidemark dialect for Microsoft SQL Server 2019+.
//
// The DDL templates are the spec's T-SQL, with every table name replaced by
// its ${placeholder} and every derived index or constraint name built from
// it (idx_${event_store_table}_global, fk_${consumer_checkpoints_table}_consumer,
// …). T-SQL has no CREATE TABLE IF NOT EXISTS: each table is guarded by
// IF OBJECT_ID(N'<table>', N'U') IS NULL (the saga tables by the spec's
// IF NOT EXISTS (SELECT * FROM sys.tables WHERE name = '<table>')), each
// index by IF NOT EXISTS (SELECT 1 FROM sys.indexes …), so every statement
// can run again. Keys that compare exactly use Latin1_General_100_BIN2 on
// NVARCHAR; the spec's VARCHAR key columns (topics, consumer names, instance
// ids, source names, saga ids and names, lock names) take
// Latin1_General_100_BIN2_UTF8 (SQL Server 2019+): code-point order, case and
// normalisation exact, no character lost to a code page, and the same byte
// size as the spec's VARCHAR(255), so no index grows. Every SQL Server
// collation compares with PAD SPACE, so the catalogue declares
// KeysIgnoreTrailingSpaces and the core refuses keys ending in a space.
//
// The deliberate differences from the spec, listed in
// docs/spec-deviations.md: the query-table indexes are guarded by
// sys.indexes like every other index (the spec prints them unguarded, so a
// second run of the script would fail); the event and snapshot tables'
// aggregate_id is NVARCHAR(510) and aggregate_type NVARCHAR(255), both
// Latin1_General_100_BIN2 (the spec's VARCHAR(255) on the database's default
// collation loses characters outside its code page and ignores case).
//
// # Identifier length
//
// SQL Server identifiers are at most 128 characters. Index and constraint
// names are derived from the table name; the core refuses at startup a table
// name whose derived names exceed Identity.MaxIdentifierLength (128 here),
// never truncating.
//
// # Files
//
// The catalogue is dialect.ANSI() plus this engine's differences, one file
// an area: sqlserver.go the identity and the assembly, ddl*.go the scripts,
// statements.go the statements, errors.go the error rules,
// introspection.go the catalogue queries and query-table columns.
package sqlserver

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// SQLServer is the SQL Server dialect.
type SQLServer struct{ dialect.Base }

var _ dialect.Dialect = (*SQLServer)(nil)

// New returns the SQL Server dialect.
func New() *SQLServer { return &SQLServer{dialect.Base{Catalogue: Catalogue()}} }

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
	c := dialect.ANSI()
	c.Identity.Name = "sqlserver"
	c.Identity.Version = Version
	c.Identity.ServerVersions = "SQL Server 2019 or later, Azure SQL Database"
	c.Identity.DriverName = "sqlserver"
	c.Identity.Drivers = []string{"sqlserver"}
	c.Identity.DSNHint = DSNHint
	c.Identity.Placeholder = dialect.PlaceholderAtP
	c.Identity.QuoteOpen, c.Identity.QuoteClose = "[", "]"
	c.Identity.MaxIdentifierLength = MaxIdentifierLength
	// A request takes at most 2100 parameters (11 per event row); a
	// multi-row VALUES at most 1000 rows.
	c.Identity.MaxBindParameters = 2100
	c.Identity.FoldsUnquotedTo = ""      // names are stored as written
	c.Identity.StatementTerminator = ";" // no statement has a procedural body

	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Statements = statements()
	// T-SQL locks rows with table hints (WITH (UPDLOCK, ROWLOCK)), not a
	// SELECT suffix, and skips locked rows with READPAST.
	c.Locks = dialect.LockForms{Now: now}
	c.Errors = errorRules()
	c.Introspection = introspection()
	c.QueryColumns = queryColumns()
	// SQL Server compares NVARCHAR with PAD SPACE under every collation,
	// Latin1_General_100_BIN2 included ("acc-1 " = "acc-1", and a unique
	// key refuses the second): no collation keeps them apart, so the core
	// refuses keys ending in a space. Case and Unicode normalisation are
	// exact under BIN2 (code-point order).
	c.KeysIgnoreTrailingSpaces = true
	// The zero Naming (case ignored, one namespace) is the reading of a
	// case-insensitive collation, the default, where constraint names
	// share sys.objects with tables. Not probed here: no SQL Server runs
	// on this project's machines.
	c.Naming.ReservedWords = reservedWords
	// occurred_at is DATETIME2 (7 digits, 100 ns); instant columns are
	// DATETIME2(6); DECIMAL goes to 38 digits.
	// NVARCHAR counts UTF-16 code units: aggregate_id is NVARCHAR(510) so
	// 255 characters fit; the other key columns hold 127 characters beyond
	// U+FFFF, and the core refuses more before SQL.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 7, InstantDigits: 6, MaxDecimalPrecision: 38,
		TextUnit: dialect.TextUTF16, AggregateIDLength: 510}
	return c
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
