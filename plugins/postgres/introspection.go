package postgres

import "github.com/tidemarkdb/tidemark/core/dialect"

// introspection returns the catalogue queries of this engine, restricted to
// the connection's current schema. Names are bound as stored: unquoted
// identifiers fold to lower case.
//
// Columns reports, for time and timestamp columns, the fractional-seconds
// precision in numeric_scale. Indexes reads pg_index, so primary keys and
// unique constraints (which PostgreSQL backs by unique indexes) are included,
// INCLUDE columns count as index columns, and an expression's column_name is
// NULL.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = #{table} AND c.relkind IN ('r', 'p')`,
		SequenceExists: `SELECT 1 FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = #{sequence} AND c.relkind = 'S'`,
		Columns: `SELECT column_name, UPPER(data_type) AS data_type,
       character_maximum_length AS char_length, numeric_precision,
       COALESCE(numeric_scale, datetime_precision) AS numeric_scale,
       is_nullable = 'YES' AS nullable
FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = #{table}
ORDER BY ordinal_position`,
		Indexes: `SELECT ic.relname AS index_name, a.attname AS column_name,
       ix.indisunique AS is_unique, k.ord AS ordinal
FROM pg_catalog.pg_index ix
JOIN pg_catalog.pg_class t ON t.oid = ix.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
JOIN pg_catalog.pg_class ic ON ic.oid = ix.indexrelid
CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0
WHERE n.nspname = current_schema() AND t.relname = #{table}
ORDER BY ic.relname, k.ord`,
	}
}
