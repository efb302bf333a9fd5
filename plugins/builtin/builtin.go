// Package builtin links the dialects shipped with Tidemark into a host, so
// the tidemark CLI can serve them by re-executing itself as the plugin
// process (still out of process) when no plugin binary is installed.
package builtin

import (
	"sort"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

var dialects = map[string]func() dialect.Dialect{
	"postgres": func() dialect.Dialect { return postgres.New() },
	"sqlite":   func() dialect.Dialect { return sqlite.New() },
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
