package mysql

import "github.com/tidemarkdb/tidemark/core/dialect"

// queryColumns is ANSI's query-table columns with instants as DATETIME(6)
// (UTC) and unguarded index statements.
//
// MySQL 8 has no CREATE INDEX IF NOT EXISTS (MariaDB has), so both engines
// use plain CREATE [UNIQUE] INDEX guarded by IndexExists, which the core runs
// first. A unique index accepts any number of NULLs, so read models without a
// value do not count against it.
func queryColumns() dialect.QueryColumnTypes {
	qc := dialect.ANSI().QueryColumns
	qc.Types[dialect.KindInstant] = "DATETIME(6)"
	qc.Index = "CREATE INDEX idx_${query_table}_${column} ON ${query_table} (${column})"
	qc.UniqueIndex = "CREATE UNIQUE INDEX idx_${query_table}_${column} ON ${query_table} (${column})"
	// Index names compare case-insensitively on both engines; the
	// statistics view has one row per index column, hence LIMIT 1.
	qc.IndexExists = `SELECT 1 FROM information_schema.statistics
WHERE table_schema = DATABASE() AND table_name = #{table} AND LOWER(index_name) = LOWER(#{index})
LIMIT 1`
	return qc
}

// introspection returns the catalogue queries of this engine. Every query
// looks only in the connection's current database (DATABASE()), and names
// its result columns in lower case (MySQL 8 would otherwise return
// information_schema's upper-case names).
//
// Columns reports a temporal column's fractional-second digits
// (datetime_precision) as its numeric_scale, so the core can check the
// "at least 6 fractional digits" rule of the spec with the contract's row
// shape. A BOOLEAN column reads as TINYINT, which the spec accepts.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM information_schema.tables
WHERE table_schema = DATABASE() AND table_name = #{table} AND table_type = 'BASE TABLE'`,
		Columns: `SELECT column_name AS column_name,
       UPPER(data_type) AS data_type,
       character_maximum_length AS char_length,
       numeric_precision AS numeric_precision,
       COALESCE(numeric_scale, datetime_precision) AS numeric_scale,
       CASE WHEN is_nullable = 'YES' THEN 1 ELSE 0 END AS nullable
FROM information_schema.columns
WHERE table_schema = DATABASE() AND table_name = #{table}
ORDER BY ordinal_position`,
		Indexes: `SELECT index_name AS index_name,
       column_name AS column_name,
       CASE WHEN non_unique = 0 THEN 1 ELSE 0 END AS is_unique,
       seq_in_index AS ordinal
FROM information_schema.statistics
WHERE table_schema = DATABASE() AND table_name = #{table}
ORDER BY index_name, seq_in_index`,
	}
}
