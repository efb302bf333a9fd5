package h2

import "github.com/tidemarkdb/tidemark/core/dialect"

// introspection returns the catalogue queries of H2 2.1's INFORMATION_SCHEMA,
// restricted to the current schema. Names are bound as stored: unquoted
// identifiers fold to upper case.
//
// Columns reports, for time and timestamp columns, the fractional-seconds
// precision in numeric_scale. Indexes reads INDEX_COLUMNS, which lists the
// indexes backing primary keys and unique constraints too.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM INFORMATION_SCHEMA.TABLES
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table} AND TABLE_TYPE = 'BASE TABLE'`,
		Columns: `SELECT COLUMN_NAME, UPPER(DATA_TYPE) AS DATA_TYPE,
       CHARACTER_MAXIMUM_LENGTH AS CHAR_LENGTH, NUMERIC_PRECISION,
       COALESCE(NUMERIC_SCALE, DATETIME_PRECISION) AS NUMERIC_SCALE,
       IS_NULLABLE = 'YES' AS NULLABLE
FROM INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table}
ORDER BY ORDINAL_POSITION`,
		Indexes: `SELECT INDEX_NAME, COLUMN_NAME, IS_UNIQUE, ORDINAL_POSITION AS ORDINAL
FROM INFORMATION_SCHEMA.INDEX_COLUMNS
WHERE TABLE_SCHEMA = CURRENT_SCHEMA AND TABLE_NAME = #{table}
ORDER BY INDEX_NAME, ORDINAL_POSITION`,
	}
}
