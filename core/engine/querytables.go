package engine

import (
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"

	"github.com/tidemarkdb/tidemark/core/schema"
)

// UndeclaredQueryTableError reports a projection whose query table was not
// in Config.QueryTables when the engine opened, so nothing created or
// checked it.
type UndeclaredQueryTableError struct{ Projection string }

func (e *UndeclaredQueryTableError) Error() string {
	return fmt.Sprintf("projection %q: its query table was not declared when the engine opened; add the projection's QueryTable() to engine.Config.QueryTables", e.Projection)
}

// resolveQueryTables keeps each declared query table with its resolved
// name, by projection.
func (e *Engine) resolveQueryTables(cfg Config) error {
	e.queryTables = make(map[string]schema.QueryTable, len(cfg.QueryTables))
	for _, q := range cfg.QueryTables {
		name, err := schema.ResolveQueryTable(q, cfg.Names.Prefixes[dialect.AreaCQRS])
		if err != nil {
			return err
		}
		q.Table = name
		e.queryTables[q.Projection] = q
	}
	return nil
}

// QueryTable is the query table declared for projection at Open, its Table
// resolved to the name the engine created or checked.
func (e *Engine) QueryTable(projection string) (schema.QueryTable, error) {
	q, ok := e.queryTables[projection]
	if !ok {
		return schema.QueryTable{}, &UndeclaredQueryTableError{Projection: projection}
	}
	return q, nil
}
