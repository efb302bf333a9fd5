// Package mysql is the Tidemark dialect for MySQL 8 and MariaDB 10.6+.
//
// One implementation serves both: New() describes the "mysql" dialect,
// New(MariaDB()) the "mariadb" one (see package plugins/mariadb); they differ
// in their identity and in the event insert (MariaDB's computes a single-event
// Any append's sequence number and returns it: mariaDBEventInsert). Positions
// use a counter row (COUNTER_ROW).
//
// Both engines run the same DDL: the spec gives MariaDB the MySQL scripts
// verbatim (the saga scripts have a MariaDB folder of their own, with the same
// text), so this package has no flavor switch for the schema. The templates
// follow the spec's MySQL blocks, with these deliberate differences, each
// listed in docs/spec-deviations.md:
//
//   - every CREATE TABLE ends with DEFAULT CHARSET = utf8mb4, so 4-byte UTF-8
//     payloads and keys are stored whatever the server's default character
//     set (MariaDB's compiled-in default is latin1). Every utf8mb4 index
//     stays within InnoDB's 3072-byte key limit (DYNAMIC row format, the
//     default of both engines); the widest, SAGA_DEADLINES' unique key of
//     three VARCHAR(255) columns, takes 3060 bytes;
//   - the query-table indexes are created without IF NOT EXISTS, which MySQL 8
//     lacks, and guarded instead by QueryColumnTypes.IndexExists;
//   - every VARCHAR key column carries keyText, a binary NO PAD collation
//     (utf8mb4_nopad_bin on MariaDB, utf8mb4_0900_bin on MySQL): the table
//     default collation ignores case, and utf8mb4_bin ignores trailing
//     spaces, either of which would make two keys one.
//
// # Identifier length
//
// MySQL and MariaDB refuse identifiers over 64 characters, and index and
// constraint names are derived from the table name (the longest,
// uq_${event_store_table}_aggregate_sequence, adds 22 characters). The core
// refuses at startup a table name whose derived names exceed
// Identity.MaxIdentifierLength (64 here); it never truncates.
//
// # Files
//
// The catalogue is dialect.ANSI() plus this engine's differences, one file
// an area: mysql.go the identity and the assembly, ddl*.go the scripts,
// statements.go the statements, errors.go the error rules,
// introspection.go the catalogue queries and query-table columns.
package mysql

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Version is the plugin's own version.
const Version = "0.1.0"

// Flavor is the engine a catalogue is described for. The schema, the
// statements and the error rules are the same for both; the flavor names the
// dialect ("mysql" or "mariadb"), the server versions it supports and the
// reserved words.
type Flavor int

// Flavors.
const (
	// FlavorMySQL is MySQL 8.0 or later.
	FlavorMySQL Flavor = iota
	// FlavorMariaDB is MariaDB 10.6 or later.
	FlavorMariaDB
)

// String returns the dialect name of the flavor: "mysql" or "mariadb".
func (f Flavor) String() string {
	if f == FlavorMariaDB {
		return "mariadb"
	}
	return "mysql"
}

// MySQL is the MySQL / MariaDB dialect.
type MySQL struct {
	dialect.Base
	flavor Flavor
}

var _ dialect.Dialect = (*MySQL)(nil)

// Option configures New.
type Option func(*MySQL)

// MariaDB makes New describe the MariaDB flavor (dialect name "mariadb").
func MariaDB() Option { return func(m *MySQL) { m.flavor = FlavorMariaDB } }

// New returns the MySQL dialect, or the MariaDB one with the MariaDB option.
func New(opts ...Option) *MySQL {
	m := &MySQL{}
	for _, o := range opts {
		o(m)
	}
	m.Catalogue = Catalogue(m.flavor)
	return m
}

// Flavor returns the engine the dialect describes.
func (m *MySQL) Flavor() Flavor { return m.flavor }

// now is the database clock in UTC, with microseconds, comparable with the
// DATETIME(6) lease columns (which hold UTC).
const now = `UTC_TIMESTAMP(6)`

// DSNHint is an example go-sql-driver/mysql DSN. parseTime=true&loc=UTC are
// required: DATETIME(6) columns hold UTC, time.Time arguments must be sent
// as UTC and must come back as time.Time in UTC. charset=utf8mb4 makes the
// connection carry 4-byte UTF-8 whatever the server's default character set;
// time_zone='+00:00' keeps the session clock (NOW(), column defaults) in UTC.
const DSNHint = "user:password@tcp(127.0.0.1:3306)/db?parseTime=true&loc=UTC&charset=utf8mb4&collation=utf8mb4_bin&time_zone=%27%2B00%3A00%27"

// keyCollation finds indexed columns of the current database whose
// collation ignores case (every such MariaDB and MySQL collation ends in
// _ci: utf8mb4_general_ci, utf8mb4_0900_ai_ci, uca1400_ai_ci…). Columns of
// 36 characters hold UUIDs, which the core writes in canonical lower case
// (the DDL leaves them on the table's default collation): they are exempt.
var keyCollation = dialect.KeyCollationCheck{
	Query: `SELECT c.TABLE_NAME, c.COLUMN_NAME, c.COLLATION_NAME FROM information_schema.COLUMNS c
WHERE c.TABLE_SCHEMA = DATABASE() AND c.COLLATION_NAME LIKE '%\_ci' AND c.CHARACTER_MAXIMUM_LENGTH <> 36
AND EXISTS (SELECT 1 FROM information_schema.STATISTICS s
 WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME AND s.COLUMN_NAME = c.COLUMN_NAME)
ORDER BY c.TABLE_NAME, c.COLUMN_NAME`,
	Remedy: "convert the column back to a binary collation, e.g. ALTER TABLE <table> MODIFY <column> <its type> CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin (MariaDB) or utf8mb4_0900_bin (MySQL), after checking that no two keys differ only in case",
}

// Catalogue is the catalogue of flavor f.
func Catalogue(f Flavor) dialect.Catalogue {
	c := dialect.ANSI()
	c.Identity.Name = f.String()
	c.Identity.Version = Version
	c.Identity.ServerVersions = "MySQL 8.0.17 or later (SKIP LOCKED; utf8mb4_0900_bin for keys)"
	if f == FlavorMariaDB {
		c.Identity.ServerVersions = "MariaDB 10.6 or later (SKIP LOCKED)"
	}
	c.Identity.DriverName = "mysql"
	c.Identity.Drivers = []string{"mysql"}
	c.Identity.DSNHint = DSNHint
	c.Identity.QuoteOpen, c.Identity.QuoteClose = "`", "`"
	c.Identity.MaxIdentifierLength = MaxIdentifierLength
	c.Identity.FoldsUnquotedTo = ""      // names are stored as written
	c.Identity.StatementTerminator = ";" // no statement has a procedural body
	// DATETIME(6) keeps microseconds; DECIMAL goes to 65 digits. BOOLEAN
	// is stored as TINYINT(1); TIMESTAMP ends in 2038, so an instant
	// column must be a DATETIME.
	c.Facts = dialect.EngineFacts{EventTimeDigits: 6, InstantDigits: 6, MaxDecimalPrecision: 65,
		QueryTypes: map[dialect.QueryFieldKind][]string{
			dialect.KindBoolean: {"BOOLEAN", "BIT", "TINYINT"},
			dialect.KindInstant: {"DATETIME"},
		}}

	// A statement with its values must fit in one packet: a larger one
	// fails with error 1153 (or the driver's ErrPktTooLarge) only once sent.
	c.StatementLimit = dialect.StatementLimit{Setting: "max_allowed_packet", Query: "SELECT @@max_allowed_packet"}

	// keyText gives every key column a binary collation, but a table made
	// before the core's DDL ran, or converted afterwards (ALTER TABLE …
	// CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, as a
	// database-wide collation change does), compares its keys ignoring
	// case: "src" and "Src" would share one checkpoint.
	c.KeyCollation = keyCollation

	// The OK packet of the UPDATE carries LAST_INSERT_ID(val + n): one
	// round trip fewer while the counter row is locked.
	c.PositionSettings.AllocatedInResult = true
	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl())
	c.Statements = statements()
	if f == FlavorMariaDB {
		c.EventInsert = mariaDBEventInsert()
	}
	c.Locks.SkipLocked = true
	c.Locks.Now = now
	c.Errors = errorRules()
	c.Naming = naming(f)
	// GET_LOCK is server-wide: the name carries the database's, hashed
	// to stay within the 64 characters a lock name may have.
	c.SchemaLock = dialect.SchemaLock{
		Acquire: `SELECT GET_LOCK(CONCAT(#{name}, '.', MD5(COALESCE(DATABASE(), ''))), 31536000)`,
		Release: `SELECT RELEASE_LOCK(CONCAT(#{name}, '.', MD5(COALESCE(DATABASE(), ''))))`,
	}
	c.Introspection = introspection()
	c.QueryColumns = queryColumns()
	return c
}

// reservedWords are the 245 words MariaDB 10.11 refuses as a table or
// column name: of its own INFORMATION_SCHEMA.KEYWORDS (which lists
// non-reserved keywords too) and the SQL standard's reserved words, those
// it refuses when creating a table and a column of each name (the
// conformance suite's TIDEMARK_PROBE_WORDS mode).
var reservedWords = strings.Fields(`
ACCESSIBLE ADD ALL ALTER ANALYZE AND AS ASC ASENSITIVE BEFORE BETWEEN BIGINT BINARY BLOB BOTH BY
CALL CASCADE CASE CHANGE CHAR CHARACTER CHECK COLLATE COLUMN CONDITION CONSTRAINT CONTINUE CONVERT
CREATE CROSS CURRENT_DATE CURRENT_ROLE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURSOR DATABASES
DAY_HOUR DAY_MICROSECOND DAY_MINUTE DAY_SECOND DEC DECIMAL DECLARE DEFAULT DELAYED DELETE
DELETE_DOMAIN_ID DESC DESCRIBE DETERMINISTIC DISTINCT DISTINCTROW DIV DOUBLE DO_DOMAIN_IDS DROP DUAL
EACH ELSE ELSEIF ENCLOSED ESCAPED EXCEPT EXISTS EXIT EXPLAIN FALSE FETCH FLOAT FLOAT4 FLOAT8 FOR
FORCE FOREIGN FROM FULLTEXT GRANT GROUP HAVING HIGH_PRIORITY HOUR_MICROSECOND HOUR_MINUTE
HOUR_SECOND IF IGNORE IGNORE_DOMAIN_IDS IN INDEX INFILE INNER INOUT INSENSITIVE INSERT INT INT1 INT2
INT3 INT4 INT8 INTEGER INTERSECT INTERVAL INTO IS ITERATE JOIN KEY KEYS KILL LEADING LEAVE LEFT LIKE
LIMIT LINEAR LINES LOAD LOCALTIME LOCALTIMESTAMP LOCK LONG LONGBLOB LONGTEXT LOOP LOW_PRIORITY
MASTER_DEMOTE_TO_REPLICA MASTER_DEMOTE_TO_SLAVE MASTER_SSL_VERIFY_SERVER_CERT MATCH MAXVALUE
MEDIUMBLOB MEDIUMINT MEDIUMTEXT MIDDLEINT MINUTE_MICROSECOND MINUTE_SECOND MOD MODIFIES NATURAL NOT
NO_WRITE_TO_BINLOG NULL NUMERIC OFFSET ON OPTIMIZE OPTIONALLY OR ORDER OUT OUTER OUTFILE OVER
PAGE_CHECKSUM PARSE_VCOL_EXPR PARTITION PORTION PRECISION PRIMARY PROCEDURE PURGE RANGE READ READS
READ_WRITE REAL RECURSIVE REFERENCES REF_SYSTEM_ID REGEXP RELEASE RENAME REPEAT REPLACE REQUIRE
RESIGNAL RESTRICT RETURN RETURNING REVOKE RIGHT RLIKE ROWS ROW_NUMBER SCHEMAS SECOND_MICROSECOND
SELECT SENSITIVE SEPARATOR SET SHOW SIGNAL SMALLINT SPATIAL SPECIFIC SQL SQLEXCEPTION SQLSTATE
SQLWARNING SQL_BIG_RESULT SQL_CALC_FOUND_ROWS SQL_SMALL_RESULT SSL STARTING STATS_AUTO_RECALC
STATS_PERSISTENT STATS_SAMPLE_PAGES STRAIGHT_JOIN TABLE TERMINATED THEN TINYBLOB TINYINT TINYTEXT TO
TRAILING TRIGGER TRUE UNDO UNION UNIQUE UNLOCK UNSIGNED UPDATE USAGE USE USING UTC_DATE UTC_TIME
UTC_TIMESTAMP VALUES VARBINARY VARCHAR VARCHARACTER VARYING WHEN WHERE WHILE WITH WRITE XOR
YEAR_MONTH ZEROFILL
`)

// mysql8ReservedWords are reserved by MySQL 8.0 beyond MariaDB's list (the
// window and JSON functions, LATERAL, RECURSIVE …; "Keywords and Reserved
// Words" of the MySQL 8.0 manual, marked (R)). No MySQL 8 server runs here
// to probe them.
var mysql8ReservedWords = strings.Fields(`
ARRAY CUBE CUME_DIST DENSE_RANK EMPTY FIRST_VALUE FUNCTION GROUPING GROUPS JSON_TABLE LAG LAST_VALUE
LATERAL LEAD MEMBER NTH_VALUE NTILE OF OVER PERCENT_RANK RANK RECURSIVE ROW ROWS ROW_NUMBER SYSTEM WINDOW
`)

// naming is MySQL's and MariaDB's: on Linux (lower_case_table_names=0, the
// default there) table names are case-sensitive, index names are not and
// are unique per table. A server with lower_case_table_names=1 (Windows,
// macOS) folds table names: there, names differing only in case would be
// one table, and should not be configured.
func naming(f Flavor) dialect.Naming {
	words := append([]string(nil), reservedWords...)
	if f != FlavorMariaDB {
		words = append(words, mysql8ReservedWords...)
	}
	return dialect.Naming{TablesCaseSensitive: true, IndexScope: dialect.IndexScopeTable, ReservedWords: words}
}
