// Package builtin is the registry of the dialects shipped with Tidemark: the
// one list the CLI (which serves them by re-executing itself as the plugin
// process, still out of process, when no plugin binary is installed), the
// conformance suite and the bench read. docs/writing-a-dialect.md has the
// checklist for adding a built-in.
package builtin

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/plugins/h2"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
	"github.com/tidemarkdb/tidemark/plugins/mariadb"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
	"github.com/tidemarkdb/tidemark/plugins/sqlserver"
)

// Builtin is one dialect shipped with Tidemark.
type Builtin struct {
	// Name is the dialect's name: its Identity.Name, the suffix of its plugin
	// binary and the directory plugins/<Name>.
	Name string
	// New returns the dialect.
	New func() dialect.Dialect
}

// Target is one row of the conformance matrix: a built-in dialect on an
// engine of the suite's harness through a database/sql driver.
type Target struct {
	// Name is the suite's name of the row (its subtest name, spaces as _).
	Name string
	// Dialect is the Builtin's Name.
	Dialect string
	// Engine is the harness engine serving the databases.
	Engine string
	// Driver is the database/sql driver name.
	Driver string
	// Lane is the server the row runs on: rows of one lane run one after
	// the other, rows of different lanes side by side.
	Lane string
	// Bench marks the rows make bench measures.
	Bench bool
}

// builtins are the built-in dialects, sorted by name.
var builtins = []Builtin{
	{"h2", func() dialect.Dialect { return h2.New() }},
	{"hsqldb", func() dialect.Dialect { return hsqldb.New() }},
	{"mariadb", func() dialect.Dialect { return mariadb.New() }},
	{"mysql", func() dialect.Dialect { return mysql.New() }},
	{"postgres", func() dialect.Dialect { return postgres.New() }},
	{"sqlite", func() dialect.Dialect { return sqlite.New() }},
	{"sqlserver", func() dialect.Dialect { return sqlserver.New() }},
}

// targets are the rows of the matrix. The order interleaves the lanes, so
// two rows running side by side are usually on different servers (the
// suite's wall time on 2 cores: see docs/conformance.md).
var targets = []Target{
	{Name: "sqlite", Dialect: "sqlite", Engine: "sqlite", Driver: "sqlite", Lane: "sqlite", Bench: true},
	{Name: "postgres (pgx)", Dialect: "postgres", Engine: "postgres", Driver: "pgx", Lane: "postgres", Bench: true},
	{Name: "mariadb", Dialect: "mariadb", Engine: "mariadb", Driver: "mysql", Lane: "mariadb", Bench: true},
	{Name: "h2", Dialect: "h2", Engine: "h2", Driver: "jdbcbridge", Lane: "bridge", Bench: true},
	{Name: "postgres (lib/pq)", Dialect: "postgres", Engine: "postgres", Driver: "postgres", Lane: "postgres"},
	{Name: "mysql plugin on MariaDB", Dialect: "mysql", Engine: "mysql", Driver: "mysql", Lane: "mariadb"},
	{Name: "hsqldb", Dialect: "hsqldb", Engine: "hsqldb", Driver: "jdbcbridge", Lane: "bridge", Bench: true},
	{Name: "sqlserver", Dialect: "sqlserver", Engine: "sqlserver", Driver: "sqlserver", Lane: "sqlserver"},
}

// Lookup returns the built-in dialect called name.
func Lookup(name string) (dialect.Dialect, bool) {
	for _, b := range builtins {
		if b.Name == name {
			return b.New(), true
		}
	}
	return nil, false
}

// Names lists the built-in dialects, sorted.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, b.Name)
	}
	return out
}

// All returns every built-in dialect, sorted by name.
func All() []Builtin {
	return append([]Builtin(nil), builtins...)
}

// Targets returns the rows of the conformance matrix, in the suite's order.
func Targets() []Target {
	return append([]Target(nil), targets...)
}

// CmdPackage is the import path of the command that serves the built-in
// dialect name as a plugin binary, plugins/<name>/cmd/tidemark-dialect-<name>.
func CmdPackage(name string) string {
	return "github.com/tidemarkdb/tidemark/plugins/" + name + "/cmd/" + plugin.PluginBinaryPrefix + name
}
