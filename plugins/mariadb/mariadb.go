// Package mariadb is the Tidemark dialect for MariaDB 10.6+.
//
// It shares its implementation with plugins/mysql: the spec gives MariaDB the
// MySQL DDL verbatim (the saga scripts' MariaDB folder holds the same text),
// so the schema, the statements, the error rules, the query-column types and
// the introspection queries are those of package mysql, proven on a real
// MariaDB server by the conformance suite and plugins/mysql/realengine_test.go.
// Only the identity (name "mariadb", server versions) and the event insert's
// NextSequence/ComputedTail (INSERT … RETURNING, which MySQL 8 lacks: a
// single-event Any append reads no version) are its own.
//
// MariaDB has INSERT … RETURNING and DELETE … RETURNING but, like MySQL 8, no
// UPDATE … RETURNING, so the counter allocation is the same single UPDATE
// with LAST_INSERT_ID(expr) on both engines.
package mariadb

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
)

var _ dialect.Dialect = New()

// New returns the MariaDB dialect: package mysql's implementation with the
// MariaDB flavor.
func New() *mysql.MySQL { return mysql.New(mysql.MariaDB()) }

// Catalogue is the MariaDB catalogue.
func Catalogue() dialect.Catalogue { return mysql.Catalogue(mysql.FlavorMariaDB) }
