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
		QueryColumns:  queryColumns(),
		Introspection: introspection(),
	}
	ddlgolden.Check(t, c, "testdata/golden")
}
