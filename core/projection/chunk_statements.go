package projection

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// maxInList is the most values one IN list of a chunk's statements binds;
// a longer list is split. Lists are compiled at powers of two up to it
// (the values padded with the last one), so a table has a few shapes.
const maxInList = 256

// maxLoadBranches is the most keys one load reads: a UNION ALL branch per
// key, each the single read model's load (an index probe of the query
// table, one of the records table). An IN list would be one statement too,
// but a plan the server makes once for a prepared statement while the
// tables are small (PostgreSQL's generic plan) scans both tables for ever
// after (measured on PostgreSQL: a catch-up of 60,000 events ran at 1,568
// events/s, one of 20,000 at 9,035). 64 branches of two tables stay under Firebird's
// 255 tables per statement.
const maxLoadBranches = 64

// chunkStatements are a chunk apply's statements over one query table:
// the read models of many keys loaded in one read, the deleted ones'
// rows deleted in one statement, the new ones inserted in multi-row
// inserts (engine.Insert), and their READ_MODEL_EPOCHS rows the same way.
type chunkStatements struct {
	e      *engine.Engine
	table  string
	cache  sync.Map // "kind/size" → dialect.Compiled
	rows   *engine.Insert
	epochs *engine.Insert
	shape  engine.InsertShape
}

// newChunkStatements prepares the chunk statements of table whose query
// columns are cols. The multi-row inserts take the dialect's read-model
// insert's row limit (Firebird's 1: no multi-row VALUES).
func newChunkStatements(e *engine.Engine, table string, cols []string) *chunkStatements {
	params := []string{"key", "message_id"}
	binds := []string{"#{key}", "#{message_id}"}
	for i := range cols {
		params = append(params, fieldBind(i))
		binds = append(binds, "#{"+fieldBind(i)+"}")
	}
	maxRows := e.Cat.ReadModelInsert.MaxRows
	rows := dialect.RowInsert{
		Head:    "INSERT INTO ${query_table} (" + strings.Join(append([]string{"read_model_id", "message_id"}, cols...), ", ") + ") VALUES ",
		Row:     "(" + strings.Join(binds, ", ") + ")",
		MaxRows: maxRows,
	}
	epochs := dialect.RowInsert{
		Head:    "INSERT INTO ${read_model_epochs_table} (projection, read_model_key, epoch) VALUES ",
		Row:     "(#{projection}, #{key}, #{epoch})",
		MaxRows: maxRows,
	}
	return &chunkStatements{
		e:      e,
		table:  table,
		rows:   e.NewInsert("query-table insert", rows, params),
		epochs: e.NewInsert("read-model epochs insert", epochs, []string{"projection", "key", "epoch"}),
		shape:  engine.InsertShape{Tables: map[string]string{"query_table": table}, Variant: "rows"},
	}
}

// Texts of the list statements: the load's branch (one per key, joined by
// UNION ALL) and the IN-list deletions, where each %s is a list of binds.
const (
	loadBranchText = `SELECT q.read_model_id, q.message_id, r.payload FROM ${query_table} q
LEFT JOIN ${read_model_capture_records_table} r ON r.id = q.message_id
WHERE q.read_model_id = #{%s}`
	removeManyText       = `DELETE FROM ${query_table} WHERE read_model_id IN (%[1]s) AND message_id IN (%[2]s)`
	removeEpochsManyText = `DELETE FROM ${read_model_epochs_table} WHERE projection = #{projection} AND read_model_key IN (%[1]s)`
)

// inList compiles text for lists of size binds named key_… (and old_…);
// the load's text is its branch, repeated size times.
func (c *chunkStatements) inList(text string, size int) (dialect.Compiled, error) {
	ck := fmt.Sprintf("%d/%s", size, text)
	if v, ok := c.cache.Load(ck); ok {
		return v.(dialect.Compiled), nil
	}
	keys, olds := make([]string, size), make([]string, size)
	for i := range size {
		keys[i], olds[i] = "#{"+listBind("key", i)+"}", "#{"+listBind("old", i)+"}"
	}
	full := fmt.Sprintf(text, strings.Join(keys, ", "), strings.Join(olds, ", "))
	if text == loadBranchText {
		branches := make([]string, size)
		for i := range size {
			branches[i] = fmt.Sprintf(text, listBind("key", i))
		}
		full = strings.Join(branches, "\nUNION ALL\n")
	}
	comp, err := c.e.CompileText(full, map[string]string{"query_table": c.table})
	if err != nil {
		return comp, fmt.Errorf("query table %s: %w", c.table, err)
	}
	c.cache.Store(ck, comp)
	return comp, nil
}

// listBind names the i-th bind of a list (bind names are letters and
// underscores).
func listBind(prefix string, i int) string {
	return prefix + strings.TrimPrefix(fieldBind(i), "field")
}

// sizeOf is the compiled size a list of n values is bound to.
func sizeOf(n int) int {
	size := 1
	for size < n {
		size *= 2
	}
	return size
}

// lists calls fn with the binds of each slice of at most most keys (and
// their olds, when given), padded to the compiled size, and extra's.
func lists(keys, olds []string, most int, extra map[string]any, fn func(size int, binds map[string]any) error) error {
	for from := 0; from < len(keys); from += most {
		to := min(from+most, len(keys))
		size := sizeOf(to - from)
		binds := make(map[string]any, 2*size+len(extra))
		for k, v := range extra {
			binds[k] = v
		}
		for i := range size {
			j := min(from+i, to-1)
			binds[listBind("key", i)] = keys[j]
			if olds != nil {
				binds[listBind("old", i)] = olds[j]
			}
		}
		if err := fn(size, binds); err != nil {
			return err
		}
	}
	return nil
}

// loadMany reads the rows of keys with their messages' payloads; fn gets
// each row found.
func (c *chunkStatements) loadMany(ctx context.Context, q engine.Querier, keys []string,
	fn func(key string, msgID, payload sql.NullString) error) error {
	return lists(keys, nil, maxLoadBranches, nil, func(size int, binds map[string]any) error {
		comp, err := c.inList(loadBranchText, size)
		if err != nil {
			return err
		}
		rows, err := c.e.QueryCompiled(ctx, q, comp, binds)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var msgID, payload sql.NullString
			if err := rows.Scan(&key, &msgID, &payload); err != nil {
				return c.e.Errors.Wrap(err)
			}
			if err := fn(key, msgID, payload); err != nil {
				return err
			}
		}
		return c.e.Errors.Wrap(rows.Err())
	})
}

// removeMany deletes the rows of keys that still hold the message ids
// olds (key i's, olds[i]); it returns how many it deleted. The message ids
// are unique and each is its own key's: a row matches both lists only as
// the pair it was read as.
func (c *chunkStatements) removeMany(ctx context.Context, tx *sql.Tx, keys, olds []string) (int64, error) {
	var n int64
	err := lists(keys, olds, maxInList, nil, func(size int, binds map[string]any) error {
		comp, err := c.inList(removeManyText, size)
		if err != nil {
			return err
		}
		res, err := c.e.ExecCompiled(ctx, tx, comp, binds)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		n += k
		return err
	})
	return n, err
}

// removeEpochs deletes projection's READ_MODEL_EPOCHS rows of keys.
func (c *chunkStatements) removeEpochs(ctx context.Context, tx *sql.Tx, projection string, keys []string) error {
	return lists(keys, nil, maxInList, map[string]any{"projection": projection}, func(size int, binds map[string]any) error {
		comp, err := c.inList(removeEpochsManyText, size)
		if err != nil {
			return err
		}
		_, err = c.e.ExecCompiled(ctx, tx, comp, binds)
		return err
	})
}

// insertRows inserts query-table rows (key, message id, each field's
// column value) in as few statements as the insert allows.
func (c *chunkStatements) insertRows(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	return insertAll(ctx, tx, c.rows, c.shape, rows)
}

// insertEpochs inserts READ_MODEL_EPOCHS rows (projection, key, epoch).
func (c *chunkStatements) insertEpochs(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	return insertAll(ctx, tx, c.epochs, engine.InsertShape{Variant: "epochs"}, rows)
}

func insertAll(ctx context.Context, tx *sql.Tx, in *engine.Insert, shape engine.InsertShape, rows [][]any) error {
	chunk := in.MaxRows(shape)
	for from := 0; from < len(rows); from += chunk {
		if _, err := in.Exec(ctx, tx, shape, rows[from:min(from+chunk, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}
