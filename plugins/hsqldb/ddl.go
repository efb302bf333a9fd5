package hsqldb

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/internal/specddl"
)

// ddl returns the DDL templates of every standard script, keyed by script name.
//
// The statements are the spec's HSQLDB 2.7 blocks with every table name replaced
// by its ${placeholder} and every derived index or constraint name built from
// it (docs/spec-deviations.md lists where they differ from the spec). The
// position objects are single-row counter tables seeded with (1, 0) by a MERGE
// that never overwrites an existing row; READ_MODEL_CAPTURE_POSITIONS gets its
// rows per topic at runtime.
// The statements shared with the other dialects come from specddl.
//
// Every script starts with noPad, so each area compares its keys exactly
// whichever areas are switched on.
func ddl() map[string][]string {
	m := specddl.Merge(specddl.CommonScripts(), eventSourcingDDL, messagingDDL, cqrsSagaDDL)
	for name, stmts := range m {
		m[name] = append([]string{noPad}, stmts...)
	}
	return m
}

// noPad makes every text comparison of the database exact: SQL_TEXT (the
// default collation, code-unit order, case-sensitive) without PAD SPACE.
// HSQLDB pads by default, so "acc-1 " equals "acc-1" and a primary or unique
// key refuses the second. HSQLDB 2.7 takes NO PAD only database-wide or in a
// CREATE COLLATION, which has no IF NOT EXISTS (a script must be able to run
// twice); the SET is idempotent. It sets the property sql.pad_space=false,
// for the existing tables too (their indexes are not rebuilt: keys that
// differ only by trailing spaces could not be stored before, so none exist).
// It needs the DBA role (SA has it).
const noPad = "SET DATABASE COLLATION SQL_TEXT NO PAD"

// queryColumns maps query-field kinds to column types and index statements.
// Instants are TIMESTAMP(6) holding UTC, as the spec prescribes.
func queryColumns() dialect.QueryColumnTypes {
	return specddl.QueryColumns()
}

// introspection returns the catalogue queries of HSQLDB 2.7's
// INFORMATION_SCHEMA, restricted to the current schema. Names are bound as
// stored: unquoted identifiers fold to upper case.
//
// Columns reports, for time and timestamp columns, the fractional-seconds
// precision in numeric_scale; nullability comes from SYSTEM_COLUMNS, because
// COLUMNS.IS_NULLABLE reports a primary-key column as nullable. Indexes reads
// SYSTEM_INDEXINFO, which lists the indexes backing primary keys and unique
// constraints too (named SYS_IDX_… / SYS_PK_… / SYS_CT_…).
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM INFORMATION_SCHEMA.TABLES
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table} AND TABLE_TYPE = 'BASE TABLE'`,
		Columns: `SELECT c.COLUMN_NAME, UPPER(c.DATA_TYPE) AS DATA_TYPE,
       c.CHARACTER_MAXIMUM_LENGTH AS CHAR_LENGTH, c.NUMERIC_PRECISION,
       COALESCE(c.NUMERIC_SCALE, c.DATETIME_PRECISION) AS NUMERIC_SCALE,
       s.NULLABLE <> 0 AS NULLABLE
FROM INFORMATION_SCHEMA.COLUMNS c
JOIN INFORMATION_SCHEMA.SYSTEM_COLUMNS s
  ON s.TABLE_SCHEM = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME AND s.COLUMN_NAME = c.COLUMN_NAME
WHERE c.TABLE_SCHEMA = CURRENT_SCHEMA AND c.TABLE_NAME = #{table}
ORDER BY c.ORDINAL_POSITION`,
		Indexes: `SELECT INDEX_NAME, COLUMN_NAME, NOT NON_UNIQUE AS IS_UNIQUE, ORDINAL_POSITION AS ORDINAL
FROM INFORMATION_SCHEMA.SYSTEM_INDEXINFO
WHERE TABLE_SCHEM = CURRENT_SCHEMA AND TABLE_NAME = #{table}
ORDER BY INDEX_NAME, ORDINAL_POSITION`,
	}
}
