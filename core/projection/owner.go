package projection

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// checkTableOwner refuses a query table that holds read models of another
// projection: a row whose message is on another read-model topic than
// name's. The engine's check of its configuration sees the projections of
// one engine.Config only; this one sees a projection of another process
// (or configuration) that declared the same table, once it wrote a read
// model there. It reads the table's rows joined to their messages (a scan
// of the table at each Open).
func checkTableOwner(ctx context.Context, e *engine.Engine, name, table string) error {
	c, err := e.CompileText(`SELECT MIN(r.topic) FROM ${query_table} q
JOIN ${read_model_capture_records_table} r ON r.id = q.message_id
WHERE r.topic <> #{topic}`, map[string]string{"query_table": table})
	if err != nil {
		return fmt.Errorf("query table %s: %w", table, err)
	}
	var other sql.NullString
	if err := e.QueryRowCompiled(ctx, e.DB, c, map[string]any{"topic": name}).Scan(&other); err != nil {
		return fmt.Errorf("projection %q: reading the owner of query table %s: %w", name, table, err)
	}
	if other.Valid {
		return &DeclarationError{Projection: name, What: fmt.Sprintf(
			"its query table %s holds read models of projection %q: a query table belongs to one projection; give one of them another table (WithTable)",
			table, other.String)}
	}
	return nil
}
