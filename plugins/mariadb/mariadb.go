// Package mariadb is the Tidemark dialect for MariaDB 10.6+.
//
// It shares its implementation with plugins/mysql: the spec gives MariaDB the
// MySQL DDL verbatim (the saga scripts' MariaDB folder holds the same text),
// so the schema, the query-column types and the introspection queries are
// those of package mysql, proven on a real MariaDB server by
// plugins/mysql/realengine_test.go. Only the identity (name, server versions)
// and whatever MariaDB's statements do differently are its own; Describe and
// the plugin's main are wired here later.
package mariadb
