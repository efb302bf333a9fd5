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

// TestKeysCompareExactly: HSQLDB pads by default ("k " = "k") and takes NO
// PAD only database-wide, which needs the DBA role: it is an engine check
// read at every start (fixed when the user may), not DDL a schema owner
// could not run.
func TestKeysCompareExactly(t *testing.T) {
	c := Catalogue()
	found := false
	for _, ch := range c.Checks {
		if ch.Fix == "SET DATABASE COLLATION SQL_TEXT NO PAD" && ch.Want == "false" {
			found = true
		}
	}
	if !found {
		t.Errorf("the catalogue does not check sql.pad_space: %+v", c.Checks)
	}
	for name, stmts := range ddl() {
		for _, st := range stmts {
			if st == noPad.Fix {
				t.Errorf("script %s sets the collation: a schema owner cannot run it", name)
			}
		}
	}
}
