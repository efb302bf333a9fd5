package sqlserver

import "github.com/tidemarkdb/tidemark/core/dialect"

// queryColumns is ANSI's query-table columns with SQL Server's types
// (NVARCHAR, DATETIME2(6) holding UTC, BIT) and guarded index statements.
//
// A SQL Server unique index admits one NULL only, so the unique index is
// filtered (WHERE column IS NOT NULL): read models without a value do not
// count against it, as on every other engine. Both index statements guard
// themselves with sys.indexes, so they can run again; IndexExists answers
// the same question for the core.
func queryColumns() dialect.QueryColumnTypes {
	qc := dialect.ANSI().QueryColumns
	qc.Types[dialect.KindText] = "NVARCHAR(255)"
	qc.Types[dialect.KindInstant] = "DATETIME2(6)"
	qc.Types[dialect.KindBoolean] = "BIT"
	qc.Index = guardedIndex("query_table", "idx_${query_table}_${column}", false, "${column}")
	qc.UniqueIndex = guardedIndex("query_table", "idx_${query_table}_${column}", true, "${column}") + "\n        WHERE ${column} IS NOT NULL"
	qc.IndexExists = `SELECT 1 FROM sys.indexes WHERE name = #{index} AND object_id = OBJECT_ID(#{table})`
	return qc
}

// introspection returns the catalogue queries of this engine. Every query
// looks only in the connection's default schema (SCHEMA_NAME()).
//
// Columns reports a temporal column's fractional-second digits
// (DATETIME_PRECISION) as its numeric_scale, so the core can check the "at
// least 6 fractional digits" rule with the contract's row shape; an
// NVARCHAR(MAX) or VARCHAR(MAX) column has char_length -1.
//
// Indexes lists key columns by key_ordinal and an index's INCLUDE columns
// after them, so a unique index with INCLUDE columns reads as a
// multi-column index, as the spec asks.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM INFORMATION_SCHEMA.TABLES
WHERE TABLE_SCHEMA = SCHEMA_NAME() AND TABLE_NAME = #{table} AND TABLE_TYPE = 'BASE TABLE'`,
		Columns: `SELECT COLUMN_NAME AS column_name,
       UPPER(DATA_TYPE) AS data_type,
       CHARACTER_MAXIMUM_LENGTH AS char_length,
       NUMERIC_PRECISION AS numeric_precision,
       COALESCE(NUMERIC_SCALE, DATETIME_PRECISION) AS numeric_scale,
       CASE WHEN IS_NULLABLE = 'YES' THEN 1 ELSE 0 END AS nullable
FROM INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_SCHEMA = SCHEMA_NAME() AND TABLE_NAME = #{table}
ORDER BY ORDINAL_POSITION`,
		Indexes: `SELECT i.name AS index_name,
       c.name AS column_name,
       CAST(i.is_unique AS INT) AS is_unique,
       CASE WHEN ic.is_included_column = 1 THEN 1000 + ic.index_column_id ELSE ic.key_ordinal END AS ordinal
FROM sys.indexes i
JOIN sys.index_columns ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
JOIN sys.tables t ON t.object_id = i.object_id
WHERE t.name = #{table} AND t.schema_id = SCHEMA_ID() AND i.name IS NOT NULL
ORDER BY i.name, ordinal`,
	}
}
