package projection

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// statement is a core-written statement over the projection's validated
// table and column names, compiled once for the engine's placeholders.
type statement struct{ c dialect.Compiled }

func (st statement) exec(ctx context.Context, e *engine.Engine, q engine.Querier, binds map[string]any) (sql.Result, error) {
	return e.ExecCompiled(ctx, q, st.c, binds)
}

func (st statement) row(ctx context.Context, e *engine.Engine, q engine.Querier, binds map[string]any) engine.Row {
	return e.QueryRowCompiled(ctx, q, st.c, binds)
}

// statements are the apply's statements of one query table.
type statements struct {
	load, insert, update, remove statement
	insertEpoch, removeEpoch     statement
	setEpoch                     statement
	// unique finds a read model by a unique field's column (lower case).
	unique map[string]statement
	// chunk holds a chunk apply's statements.
	chunk *chunkStatements
}

// fieldBind is the bind name of the i-th field (bind names are letters
// and underscores): field_a, field_b, … field_ba, ….
func fieldBind(i int) string {
	name := ""
	for {
		name = string(rune('a'+i%26)) + name
		if i /= 26; i == 0 {
			return "field_" + name
		}
		i--
	}
}

func compileStatements[S any](e *engine.Engine, table string, fields []field[S]) (statements, error) {
	var cols, binds, sets strings.Builder
	for i, f := range fields {
		fmt.Fprintf(&cols, ", %s", f.decl.Column)
		fmt.Fprintf(&binds, ", #{%s}", fieldBind(i))
		fmt.Fprintf(&sets, ", %s = #{%s}", f.decl.Column, fieldBind(i))
	}
	texts := map[*statement]string{}
	var st statements
	texts[&st.load] = `SELECT q.message_id, r.payload FROM ${query_table} q
LEFT JOIN ${read_model_capture_records_table} r ON r.id = q.message_id
WHERE q.read_model_id = #{key}`
	texts[&st.insert] = `INSERT INTO ${query_table} (read_model_id, message_id` + cols.String() +
		`) VALUES (#{key}, #{message_id}` + binds.String() + `)`
	texts[&st.update] = `UPDATE ${query_table} SET message_id = #{message_id}` + sets.String() +
		` WHERE read_model_id = #{key} AND message_id = #{old}`
	texts[&st.remove] = `DELETE FROM ${query_table} WHERE read_model_id = #{key} AND message_id = #{old}`
	texts[&st.insertEpoch] = `INSERT INTO ${read_model_epochs_table} (projection, read_model_key, epoch)
VALUES (#{projection}, #{key}, #{epoch})`
	texts[&st.setEpoch] = `UPDATE ${read_model_epochs_table} SET epoch = #{epoch} WHERE projection = #{projection} AND read_model_key = #{key}`
	texts[&st.removeEpoch] = `DELETE FROM ${read_model_epochs_table} WHERE projection = #{projection} AND read_model_key = #{key}`
	columns := make([]string, len(fields))
	for i, f := range fields {
		columns[i] = f.decl.Column
	}
	st.chunk = newChunkStatements(e, table, columns)
	st.unique = map[string]statement{}
	for _, f := range fields {
		if !f.decl.Unique {
			continue
		}
		c, err := e.CompileText(`SELECT q.read_model_id, r.payload FROM ${query_table} q
LEFT JOIN ${read_model_capture_records_table} r ON r.id = q.message_id
WHERE q.`+f.decl.Column+` = #{value}`, map[string]string{"query_table": table})
		if err != nil {
			return st, fmt.Errorf("query table %s: %w", table, err)
		}
		st.unique[strings.ToLower(f.decl.Column)] = statement{c}
	}
	for dst, text := range texts {
		c, err := e.CompileText(text, map[string]string{"query_table": table})
		if err != nil {
			return st, fmt.Errorf("query table %s: %w", table, err)
		}
		dst.c = c
	}
	return st, nil
}
