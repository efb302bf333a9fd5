// Package builtin links the dialects shipped with Tidemark into a host, so
// the tidemark CLI can serve them by re-executing itself as the plugin
// process (still out of process) when no plugin binary is installed.
package builtin

import (
	"sort"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/h2"
	"github.com/tidemarkdb/tidemark/plugins/hsqldb"
	"github.com/tidemarkdb/tidemark/plugins/mariadb"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
	"github.com/tidemarkdb/tidemark/plugins/sqlserver"
)

var dialects = map[string]func() dialect.Dialect{
	"h2":        func() dialect.Dialect { return h2.New() },
	"hsqldb":    func() dialect.Dialect { return hsqldb.New() },
	"mariadb":   func() dialect.Dialect { return mariadb.New() },
	"mysql":     func() dialect.Dialect { return mysql.New() },
	"postgres":  func() dialect.Dialect { return postgres.New() },
	"sqlite":    func() dialect.Dialect { return sqlite.New() },
	"sqlserver": func() dialect.Dialect { return sqlserver.New() },
}

// Lookup returns the built-in dialect called name.
func Lookup(name string) (dialect.Dialect, bool) {
	f, ok := dialects[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Names lists the built-in dialects, sorted.
func Names() []string {
	out := make([]string, 0, len(dialects))
	for n := range dialects {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
