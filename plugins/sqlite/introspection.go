package sqlite

import "github.com/tidemarkdb/tidemark/core/dialect"

// introspection returns the catalogue queries of SQLite, on the connection's
// main schema (sqlite_master and the table-valued pragmas).
//
// SQLite keeps declared types as written; Columns splits them: data_type is
// the declared name in upper case without its parameters, char_length the
// length of a character type, numeric_precision and numeric_scale those of a
// DECIMAL or NUMERIC, and, for time and timestamp columns, numeric_scale the
// fractional-seconds precision. Indexes lists pragma_index_list, which
// includes the automatic indexes backing primary keys and unique constraints
// (sqlite_autoindex_…); an expression's column_name is NULL. Table names
// compare case-insensitively, as SQLite resolves them.
func introspection() dialect.Introspection {
	return dialect.Introspection{
		TableExists: `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = #{table} COLLATE NOCASE`,
		Columns: `SELECT name AS column_name,
       UPPER(TRIM(CASE WHEN instr(type, '(') > 0 THEN substr(type, 1, instr(type, '(') - 1) ELSE type END)) AS data_type,
       CASE WHEN instr(type, '(') > 0 AND (UPPER(type) LIKE '%CHAR%' OR UPPER(type) LIKE '%TEXT%' OR UPPER(type) LIKE '%CLOB%')
            THEN CAST(substr(type, instr(type, '(') + 1) AS INTEGER) END AS char_length,
       CASE WHEN instr(type, '(') > 0 AND (UPPER(type) LIKE 'DEC%' OR UPPER(type) LIKE 'NUM%')
            THEN CAST(substr(type, instr(type, '(') + 1) AS INTEGER) END AS numeric_precision,
       CASE WHEN instr(type, '(') > 0 AND (UPPER(type) LIKE 'DEC%' OR UPPER(type) LIKE 'NUM%')
            THEN CASE WHEN instr(type, ',') > 0 THEN CAST(substr(type, instr(type, ',') + 1) AS INTEGER) ELSE 0 END
            WHEN instr(type, '(') > 0 AND UPPER(type) LIKE 'TIME%'
            THEN CAST(substr(type, instr(type, '(') + 1) AS INTEGER) END AS numeric_scale,
       "notnull" = 0 AS nullable
FROM pragma_table_info(#{table})
ORDER BY cid`,
		Indexes: `SELECT il.name AS index_name, ii.name AS column_name, il."unique" AS is_unique, ii.seqno + 1 AS ordinal
FROM pragma_index_list(#{table}) AS il
JOIN pragma_index_info(il.name) AS ii
ORDER BY il.name, ii.seqno`,
	}
}
