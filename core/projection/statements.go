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

func (st statement) args(binds map[string]any) ([]any, error) { return st.c.Args(binds) }

func (st statement) exec(ctx context.Context, e *engine.Engine, q engine.Querier, binds map[string]any) (sql.Result, error) {
	a, err := st.args(binds)
	if err != nil {
		return nil, err
	}
	if err := refuseReadOnly(e); err != nil {
		return nil, err
	}
	r, err := q.ExecContext(ctx, st.c.SQL, a...)
	return r, e.Errors.Wrap(err)
}

func (st statement) row(ctx context.Context, e *engine.Engine, q engine.Querier, binds map[string]any) *sql.Row {
	a, err := st.args(binds)
	if err != nil {
		// A bind missing from a core-written statement is a bug; QueryRow
		// with no args then fails with the driver's count mismatch.
		return q.QueryRowContext(ctx, st.c.SQL)
	}
	return q.QueryRowContext(ctx, st.c.SQL, a...)
}

func refuseReadOnly(e *engine.Engine) error {
	if e.ReadOnly() {
		return &engine.ReadOnlyError{Op: "a read-model write"}
	}
	return nil
}

// statements are the apply's statements of one query table.
type statements struct {
	load, insert, update, remove statement
	insertEpoch, removeEpoch     statement
	get                          statement
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
	texts[&st.get] = texts[&st.load]
	texts[&st.insert] = `INSERT INTO ${query_table} (read_model_id, message_id` + cols.String() +
		`) VALUES (#{key}, #{message_id}` + binds.String() + `)`
	texts[&st.update] = `UPDATE ${query_table} SET message_id = #{message_id}` + sets.String() +
		` WHERE read_model_id = #{key} AND message_id = #{old}`
	texts[&st.remove] = `DELETE FROM ${query_table} WHERE read_model_id = #{key} AND message_id = #{old}`
	texts[&st.insertEpoch] = `INSERT INTO ${read_model_epochs_table} (projection, read_model_key, epoch)
VALUES (#{projection}, #{key}, #{epoch})`
	texts[&st.removeEpoch] = `DELETE FROM ${read_model_epochs_table} WHERE projection = #{projection} AND read_model_key = #{key}`
	for dst, text := range texts {
		c, err := e.CompileText(text, map[string]string{"query_table": table})
		if err != nil {
			return st, fmt.Errorf("query table %s: %w", table, err)
		}
		dst.c = c
	}
	return st, nil
}
