package hsqldb

import "github.com/tidemarkdb/tidemark/core/dialect"

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
