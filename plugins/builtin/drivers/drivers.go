// Package drivers links the database/sql driver of every built-in target
// (builtin.Targets) into a host: the CLI and the bench import it for its
// side effect. A built-in on a new driver adds its import here.
package drivers

import (
	_ "github.com/go-sql-driver/mysql"            // "mysql"
	_ "github.com/jackc/pgx/v5/stdlib"            // "pgx"
	_ "github.com/lib/pq"                         // "postgres"
	_ "github.com/microsoft/go-mssqldb"           // "sqlserver"
	_ "github.com/tidemarkdb/tidemark/jdbcbridge" // "jdbcbridge" (H2, HSQLDB)
	_ "modernc.org/sqlite"                        // "sqlite"
)
