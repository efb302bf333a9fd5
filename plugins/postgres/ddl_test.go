package postgres

import (
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

func TestDDLMatchesSpec(t *testing.T) {
	c := dialect.Catalogue{
		Identity:      dialect.Identity{Name: "postgres"},
		Scripts:       dialect.Scripts(dialect.ObjectSequence, ddl()),
		QueryColumns:  Catalogue().QueryColumns,
		Introspection: introspection(),
	}
	ddlgolden.Check(t, c, "testdata/golden")
}
