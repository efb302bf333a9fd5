package projection

import (
	"context"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// shadowSuffix names a query table's shadow: the table a rebuild builds
// the new read models in while readers keep the old ones.
const shadowSuffix = "_rb"

// shadowName is the shadow of table: the table's name and _rb, shortened
// by the engine's naming rule where it is over the identifier limit.
func shadowName(cat *dialect.Catalogue, table string) (string, error) {
	name, err := schema.DerivedName(cat, table+shadowSuffix)
	if err != nil {
		return "", err
	}
	return name, schema.ValidateIdentifier(name, "shadow of query table "+table)
}

// shadowTable is the shadow's declaration: the query table's own fields.
func (s *Store[S]) shadowTable() schema.QueryTable {
	q := s.p.QueryTable()
	q.Table = s.shadow
	return q
}

// ensureShadow creates the shadow table with the query table's DDL unless
// it exists with the declared shape; one left with another shape (by a
// rebuild of an earlier declaration) is dropped and created again. It runs
// before a rebuild begins, outside any transaction (DDL commits on its own
// on some engines). An engine that may not create tables in the cqrs area
// (Config.Existing, mode Never) only requires the shadow to exist.
func (s *Store[S]) ensureShadow(ctx context.Context) error {
	q := s.shadowTable()
	exists, err := schema.TableExists(ctx, s.e.DB, s.e.Cat, s.shadow)
	if err != nil {
		return fmt.Errorf("projection %q: shadow table %s: %w", s.p.name, s.shadow, err)
	}
	if !s.e.CreatesIn(dialect.AreaCQRS) {
		if !exists {
			return fmt.Errorf("projection %q: shadow table %s (the query table %s's twin, which this engine may not create): %w", s.p.name, s.shadow, s.table, ErrNoShadow)
		}
		return nil
	}
	if exists {
		if schema.CheckQueryTables(ctx, s.e.DB, s.e.Cat, s.e.Names, []schema.QueryTable{q}, "", nil) == nil {
			return nil
		}
		if _, err := s.e.DB.ExecContext(ctx, "DROP TABLE "+s.shadow); err != nil {
			return fmt.Errorf("projection %q: dropping shadow table %s of another shape: %w", s.p.name, s.shadow, s.e.Errors.Wrap(err))
		}
	}
	steps, err := schema.Plan(s.e.Cat, s.e.Names, []schema.QueryTable{q}, "")
	if err != nil {
		return fmt.Errorf("projection %q: shadow table %s: %w", s.p.name, s.shadow, err)
	}
	var mine []schema.Step
	for _, st := range steps {
		if st.Script == dialect.ScriptQueryTable && strings.EqualFold(st.Table, s.shadow) {
			mine = append(mine, st)
		}
	}
	if mine, err = schema.OmitExistingQueryTables(ctx, s.e.DB, s.e.Cat, mine); err != nil {
		return err
	}
	if err := schema.Apply(ctx, s.e.DB, mine, nil); err != nil {
		return fmt.Errorf("projection %q: creating shadow table %s: %w", s.p.name, s.shadow, err)
	}
	return nil
}

// switchStatements are the switch's statements: the live table emptied
// and filled from the shadow, the shadow emptied, the epoch rows of read
// models the replay did not re-create deleted.
type switchStatements struct {
	clearLive, fill, clearShadow, dropStale statement
}

func compileSwitch[S any](e *engine.Engine, table, shadow string, fields []field[S]) (switchStatements, error) {
	cols := "read_model_id, message_id"
	for _, f := range fields {
		cols += ", " + f.decl.Column
	}
	texts := map[*statement]string{}
	var st switchStatements
	texts[&st.clearLive] = `DELETE FROM ${query_table}`
	texts[&st.fill] = `INSERT INTO ${query_table} (` + cols + `) SELECT ` + cols + ` FROM ${shadow_table}`
	texts[&st.clearShadow] = `DELETE FROM ${shadow_table}`
	texts[&st.dropStale] = `DELETE FROM ${read_model_epochs_table} WHERE projection = #{projection} AND epoch < #{epoch}`
	for dst, text := range texts {
		c, err := e.CompileText(text, map[string]string{"query_table": table, "shadow_table": shadow})
		if err != nil {
			return st, fmt.Errorf("query table %s: %w", table, err)
		}
		dst.c = c
	}
	return st, nil
}
