package postgres

import "github.com/tidemarkdb/tidemark/core/dialect"

// ddl returns the DDL templates of every standard script, keyed by script name.
func ddl() map[string][]string { return nil }

// queryColumns maps query-field kinds to column types and index statements.
func queryColumns() dialect.QueryColumnTypes { return dialect.QueryColumnTypes{} }

// introspection returns the catalogue queries of this engine.
func introspection() dialect.Introspection { return dialect.Introspection{} }
