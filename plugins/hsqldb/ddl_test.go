package hsqldb

import (
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

func TestDDLMatchesSpec(t *testing.T) {
	c := dialect.Catalogue{
		Identity:      dialect.Identity{Name: "hsqldb"},
		Scripts:       dialect.Scripts(dialect.ObjectTable, ddl()),
		QueryColumns:  Catalogue().QueryColumns,
		Introspection: introspection(),
	}
	ddlgolden.Check(t, c, "testdata/golden")
}

// TestEveryScriptComparesExactly: HSQLDB pads by default ("k " = "k"), and
// takes NO PAD only database-wide, so every script must start with noPad
// (an area may be created alone).
func TestEveryScriptComparesExactly(t *testing.T) {
	for name, stmts := range ddl() {
		if len(stmts) == 0 || stmts[0] != noPad {
			t.Errorf("script %s does not start with %q", name, noPad)
		}
	}
}
