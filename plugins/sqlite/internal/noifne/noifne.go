// Package noifne is a test-only variant of the SQLite dialect that declares
// its engine has no IF NOT EXISTS (EngineFacts.NoIfNotExists): its scripts
// are SQLite's with every IF NOT EXISTS taken out, so the core must guard
// each CREATE with the dialect's existence queries. The conformance suite's
// schema areas run on it (noifne_test.go), as a third-party dialect for such
// an engine would.
package noifne

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// indexExists finds an index of a table in sqlite_master.
const indexExists = `SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = #{index} AND tbl_name = #{table}`

// Catalogue is SQLite's without IF NOT EXISTS.
func Catalogue() dialect.Catalogue {
	c := sqlite.Catalogue()
	strip := strings.NewReplacer(" IF NOT EXISTS", "", " if not exists", "")
	scripts := make([]dialect.Script, len(c.Scripts))
	for i, sc := range c.Scripts {
		sc.Statements = append([]string(nil), sc.Statements...)
		for j, st := range sc.Statements {
			sc.Statements[j] = strip.Replace(st)
		}
		scripts[i] = sc
	}
	c.Scripts = scripts
	c.QueryColumns.Index = strip.Replace(c.QueryColumns.Index)
	c.QueryColumns.UniqueIndex = strip.Replace(c.QueryColumns.UniqueIndex)
	c.QueryColumns.IndexExists = indexExists
	c.Facts.NoIfNotExists = true
	return c
}

// New is the variant as a dialect.
func New() dialect.Dialect { return &dialect.Base{Catalogue: Catalogue()} }
