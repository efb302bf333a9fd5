package engine

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// DefaultMaxInsertRows bounds the rows of one multi-row insert where the
// dialect sets no lower limit: 500 rows of 11 binds stay under every
// engine's statement size and well past the batch size where a bigger
// statement stops paying (measured with the event insert).
const DefaultMaxInsertRows = 500

// Insert is the one home of multi-row inserts: a catalogue RowInsert
// compiled once per shape (tables, rows, expressions), chunked under
// RowInsert.MaxRows and Identity.MaxBindParameters, bound by name from each
// row's values, and run through the engine's prepared-statement cache. The
// event insert uses it; the capture and read-model record inserts will.
type Insert struct {
	e      *Engine
	name   string
	ins    dialect.RowInsert
	params []string // the slot of each bind name in a row's values
	cache  sync.Map // string key → *compiledInsert
}

// NewInsert returns the insert of ins, named name in errors. params name
// the slots of each row's values: a row is bound as values[slot of #{name}].
func (e *Engine) NewInsert(name string, ins dialect.RowInsert, params []string) *Insert {
	return &Insert{e: e, name: name, ins: ins, params: params}
}

// InsertShape is what varies between the statements of one insert.
type InsertShape struct {
	// Tables fills the per-call ${…} placeholders (e.g. event_store_table).
	Tables map[string]string
	// Variant names the combination of Exprs, FirstExprs and Tail (a cache key:
	// one variant name must always mean the same expressions).
	Variant string
	// Exprs put an SQL expression in place of a #{bind} in every row (the
	// event insert's NextSequence for #{sequence_no}); FirstExprs in the
	// first row only (CheckedSequence), after Exprs.
	Exprs, FirstExprs map[string]string
	// Tail, when not empty, replaces RowInsert.Tail (the event insert's
	// ComputedTail, which returns what NextSequence computed).
	Tail string
}

// tail is the statement's tail in shape.
func (in *Insert) tail(shape InsertShape) string {
	if shape.Tail != "" {
		return shape.Tail
	}
	return in.ins.Tail
}

// compiledInsert is a multi-row insert with each bind's row and slot.
type compiledInsert struct {
	dialect.Compiled
	slots []int // each bind's slot in a row's values
	rows  []int // each bind's row in the statement
}

// MaxRows is the most rows one statement of shape may carry: the least of
// DefaultMaxInsertRows, RowInsert.MaxRows and what fits under
// Identity.MaxBindParameters.
func (in *Insert) MaxRows(shape InsertShape) int {
	n := DefaultMaxInsertRows
	if m := in.ins.MaxRows; m > 0 {
		n = min(n, m)
	}
	if limit := in.e.Cat.Identity.MaxBindParameters; limit > 0 {
		row := fillBinds(in.ins.Row, shape.Exprs)
		first := fillBinds(row, shape.FirstExprs)
		fixed := countBinds(in.ins.Head) + countBinds(in.tail(shape)) + countBinds(first) - countBinds(row)
		if per := countBinds(row); per > 0 {
			n = min(n, max(1, (limit-fixed)/per))
		}
	}
	return n
}

// Exec inserts rows (at most MaxRows(shape)) in one statement on q.
func (in *Insert) Exec(ctx context.Context, q Querier, shape InsertShape, rows [][]any) (sql.Result, error) {
	if err := in.e.refuse(in.name); err != nil {
		return nil, err
	}
	c, args, err := in.bind(shape, rows)
	if err != nil {
		return nil, err
	}
	return in.e.exec(ctx, q, c.SQL, args)
}

// Query inserts rows like Exec and returns the rows the statement returns
// (RETURNING, OUTPUT). Errors of the rows' Next and Scan are the driver's.
func (in *Insert) Query(ctx context.Context, q Querier, shape InsertShape, rows [][]any) (*sql.Rows, error) {
	if err := in.e.refuse(in.name); err != nil {
		return nil, err
	}
	c, args, err := in.bind(shape, rows)
	if err != nil {
		return nil, err
	}
	return in.e.query(ctx, q, c.SQL, args)
}

func (in *Insert) bind(shape InsertShape, rows [][]any) (*compiledInsert, []any, error) {
	if len(rows) == 0 || len(rows) > in.MaxRows(shape) {
		return nil, nil, fmt.Errorf("%s: %d rows in one statement, want 1..%d", in.name, len(rows), in.MaxRows(shape))
	}
	c, err := in.compiled(shape, len(rows))
	if err != nil {
		return nil, nil, err
	}
	args := make([]any, len(c.slots))
	for i, slot := range c.slots {
		args[i] = rows[c.rows[i]][slot]
	}
	return c, args, nil
}

// compiled returns the statement of n rows of shape, compiled once.
func (in *Insert) compiled(shape InsertShape, n int) (*compiledInsert, error) {
	key := cacheKey(shape.Variant+"|"+strconv.Itoa(n), shape.Tables)
	if c, ok := in.cache.Load(key); ok {
		return c.(*compiledInsert), nil
	}
	row := fillBinds(in.ins.Row, shape.Exprs)
	first := fillBinds(row, shape.FirstExprs)
	tmpl := in.ins.Head + first + strings.Repeat(", "+row, n-1) + in.tail(shape)
	compiled, err := in.e.CompileText(tmpl, shape.Tables)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	c := &compiledInsert{Compiled: compiled}
	// Rows are laid out one after the other, the first possibly with more
	// binds than the rest; the head's binds (if any) belong to row 0.
	head, firstBinds, rest := countBinds(in.ins.Head), countBinds(first), countBinds(row)
	for i, p := range compiled.Params {
		slot := slices.Index(in.params, p)
		if slot < 0 {
			return nil, fmt.Errorf("%s: parameter #{%s} is not one of %v", in.name, p, in.params)
		}
		r := 0
		if j := i - head - firstBinds; j >= 0 && rest > 0 {
			r = min(n-1, 1+j/rest)
		}
		c.slots = append(c.slots, slot)
		c.rows = append(c.rows, r)
	}
	got, _ := in.cache.LoadOrStore(key, c)
	return got.(*compiledInsert), nil
}

// fillBinds puts each expression in place of the first #{name} it replaces
// (a row template names each bind once).
func fillBinds(tmpl string, exprs map[string]string) string {
	for name, expr := range exprs {
		tmpl = strings.Replace(tmpl, "#{"+name+"}", expr, 1)
	}
	return tmpl
}

func countBinds(tmpl string) int {
	return len(dialect.Compile(tmpl, dialect.PlaceholderQuestion).Params)
}
