package conformance

import (
	"regexp"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// No two probes of the naming rules index one column of one table, under
// any declared naming: an engine that skips a duplicate index silently
// would otherwise answer "name taken" for a name it never saw.
func TestNamingProbesIndexEachColumnOnce(t *testing.T) {
	index := regexp.MustCompile(`(?i)^CREATE INDEX \S+ ON (\S+) \((\w+)\)$`)
	for _, n := range []dialect.Naming{
		{},
		{IndexScope: dialect.IndexScopeTable},
		{IndexScope: dialect.IndexScopeTable, IndexesCaseSensitive: true},
		{IndexScope: dialect.IndexScopeRelations, TablesCaseSensitive: true},
	} {
		seen := map[string]string{}
		for _, p := range namingProbes(n) {
			m := index.FindStringSubmatch(p.stmt)
			if m == nil {
				continue
			}
			key := m[1] + "." + m[2]
			if prev, ok := seen[key]; ok {
				t.Errorf("naming %+v: %q and %q both index %s", n, prev, p.stmt, key)
			}
			seen[key] = p.stmt
		}
		if len(seen) < 4 {
			t.Errorf("naming %+v: %d index probes, want at least 4", n, len(seen))
		}
	}
}
