package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// Item is a read model with its key.
type Item[S any] struct {
	Key   string
	Value S
}

// Get reads the read model of key; false when there is none.
func (s *Store[S]) Get(ctx context.Context, key string) (S, bool, error) {
	var cur current[S]
	err := s.e.RetryRead(ctx, func() (err error) {
		cur, err = s.load(ctx, s.e.DB, &s.stmts, key)
		return err
	})
	return cur.state, err == nil && cur.found, err
}

// ErrUnknownColumn is wrapped by a finder naming a column the projection
// does not declare as a query field.
var ErrUnknownColumn = errors.New("not a query field")

// ErrNotUnique is returned by FindUnique on a column not declared Unique,
// and by FindBy on a store whose declaration of the handle's column is not
// unique.
var ErrNotUnique = errors.New("query field is not unique")

// Cond is one condition of a finder on a query field: made by a field's
// typed handle (Column.Eq, …) or by the any-typed functions below, which
// name the column.
type Cond struct {
	projection string // the handle's projection; "" for a column named
	column     string
	op         string // =, <>, <, <=, >, >=, in, null, notnull
	values     []any
}

func named(column, op string, vs ...any) Cond { return Cond{column: column, op: op, values: vs} }

// Eq matches read models whose column equals v (converted as the field's
// values are: a time cut to microseconds, a decimal rounded to its scale).
// A nil v, or one converting to NULL, is refused with a *ValueError: use
// IsNull.
func Eq(column string, v any) Cond { return named(column, "=", v) }

// Ne matches a column not equal to v (NULL matches neither Eq nor Ne).
func Ne(column string, v any) Cond { return named(column, "<>", v) }

// Lt, Le, Gt and Ge compare a column with v in the column's order.
func Lt(column string, v any) Cond { return named(column, "<", v) }

// Le matches column <= v.
func Le(column string, v any) Cond { return named(column, "<=", v) }

// Gt matches column > v.
func Gt(column string, v any) Cond { return named(column, ">", v) }

// Ge matches column >= v.
func Ge(column string, v any) Cond { return named(column, ">=", v) }

// In matches a column equal to one of vs (none matches nothing).
func In(column string, vs ...any) Cond { return named(column, "in", vs...) }

// IsNull matches read models without a value in column.
func IsNull(column string) Cond { return named(column, "null") }

// NotNull matches read models with a value in column.
func NotNull(column string) Cond { return named(column, "notnull") }

// Query is a finder: conditions (all must hold), an order and a page.
type Query struct {
	Where []Cond
	// OrderBy is a query field (read models without a value come last), or
	// "" for the key order; ties are ordered by key.
	OrderBy string
	Desc    bool
	// Limit is the page size (default 100).
	Limit int
	// After continues from a page's Next.
	After Cursor
}

// Page is a finder's result: the read models in order and the cursor of
// the next page (Next.Done() when this was the last).
type Page[S any] struct {
	Items []Item[S]
	Next  Cursor
}

// Find runs q.
//
// Read models without a value in the order field come last in both
// directions. Rather than one ORDER BY that puts NULLs last (a CASE no
// index serves, so every match is sorted), a page is read in two parts:
// the models with a value, in the field's order from the cursor (a range
// the field's index serves), then, while the page has room, those without
// one in key order.
func (s *Store[S]) Find(ctx context.Context, q Query) (Page[S], error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	ord, err := s.order(q)
	if err != nil {
		return Page[S]{}, err
	}
	var page Page[S]
	err = s.e.RetryRead(ctx, func() (err error) {
		page, err = s.find(ctx, q, ord)
		return err
	})
	return page, err
}

// find reads one page of Find.
func (s *Store[S]) find(ctx context.Context, q Query, ord order[S]) (Page[S], error) {
	parts := ord.parts(q.After)
	// The first part alone fills most pages: one statement, one snapshot,
	// no transaction to begin and end (two round trips a page).
	items, cursors, err := s.readParts(ctx, s.e.DB, q, ord, parts[:1])
	if err != nil {
		return Page[S]{}, err
	}
	if len(parts) > 1 && len(items) <= q.Limit {
		// The page runs into the next part: every part is read again in
		// one read transaction, on one connection (one server), and at the
		// dialect's read level in one snapshot where that level gives one.
		if items, cursors, err = s.readPartsInTx(ctx, q, ord, parts); err != nil {
			return Page[S]{}, err
		}
	}
	page := Page[S]{Items: items}
	if len(items) > q.Limit {
		page.Items = items[:q.Limit]
		page.Next = cursors[q.Limit-1]
	} else {
		page.Next = Cursor{done: true}
	}
	return page, nil
}

// readPartsInTx is readParts in a read transaction of its own.
func (s *Store[S]) readPartsInTx(ctx context.Context, q Query, ord order[S], parts []part[S]) ([]Item[S], []Cursor, error) {
	tx, err := s.e.BeginRead(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = tx.Rollback() }()
	return s.readParts(ctx, tx, q, ord, parts)
}

// readParts reads the parts of q's page on rq, the next part only while
// the page (and the one more row that tells whether a page follows) has
// room.
func (s *Store[S]) readParts(ctx context.Context, rq engine.Querier, q Query, ord order[S], parts []part[S]) ([]Item[S], []Cursor, error) {
	want := q.Limit + 1
	var items []Item[S]
	var cursors []Cursor
	for _, part := range parts {
		b, err := s.partQuery(q, part)
		if err != nil {
			return nil, nil, err
		}
		got, cur, err := s.run(ctx, rq, b, want-len(items), ord)
		if err != nil {
			return nil, nil, err
		}
		items, cursors = append(items, got...), append(cursors, cur...)
		if len(items) >= want {
			break
		}
	}
	return items, cursors, nil
}

// partQuery is the statement of one part of q's page, before its join
// and paging clause (run adds them).
func (s *Store[S]) partQuery(q Query, p part[S]) (sq.SelectBuilder, error) {
	b, err := s.selectWhere(q.Where)
	if err != nil {
		return b, err
	}
	if b, err = p.restrict(b, q.After); err != nil {
		return b, err
	}
	return b.Columns(p.o.columns()...).OrderBy(p.terms()...), nil
}

// Statement is one SQL statement with its arguments.
type Statement struct {
	SQL  string
	Args []any
}

// Statements are the statements Find runs for q's page, in order: the
// models with a value in the order field, then, while the page has room,
// those without one. For EXPLAIN; Find builds the same.
func (s *Store[S]) Statements(q Query) ([]Statement, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	ord, err := s.order(q)
	if err != nil {
		return nil, err
	}
	var out []Statement
	for _, p := range ord.parts(q.After) {
		b, err := s.partQuery(q, p)
		if err != nil {
			return nil, err
		}
		query, args, err := s.finish(b, q.Limit+1).ToSql()
		if err != nil {
			return nil, err
		}
		out = append(out, Statement{SQL: query, Args: args})
	}
	return out, nil
}

// FindUnique returns the read model whose unique column equals v (FindBy
// is its typed form).
func (s *Store[S]) FindUnique(ctx context.Context, column string, v any) (Item[S], bool, error) {
	f, err := s.fieldOf("", column)
	if err != nil {
		return Item[S]{}, false, err
	}
	return s.findUnique(ctx, f, v)
}

// findUnique is FindUnique on field f, refused unless f is unique.
func (s *Store[S]) findUnique(ctx context.Context, f *field[S], v any) (Item[S], bool, error) {
	if !f.decl.Unique {
		return Item[S]{}, false, fmt.Errorf("projection %q, column %s: %w; use Find", s.p.name, f.decl.Column, ErrNotUnique)
	}
	bv, err := s.bindValue(f, v)
	if err != nil {
		return Item[S]{}, false, err
	}
	var it Item[S]
	var payload sql.NullString
	err = s.e.RetryRead(ctx, func() error {
		return s.stmts.unique[strings.ToLower(f.decl.Column)].row(ctx, s.e, s.e.DB, map[string]any{"value": bv}).Scan(&it.Key, &payload)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Item[S]{}, false, nil
	}
	if err != nil {
		return Item[S]{}, false, err
	}
	it.Value = s.p.init(it.Key)
	if payload.Valid {
		if err := s.p.codec.Unmarshal([]byte(payload.String), &it.Value); err != nil {
			return Item[S]{}, false, fmt.Errorf("projection %q: read model %q does not decode: %w", s.p.name, it.Key, err)
		}
	}
	return it, true, nil
}

// Count counts the read models matching every condition.
func (s *Store[S]) Count(ctx context.Context, where ...Cond) (int64, error) {
	b, err := s.selectWhere(where)
	if err != nil {
		return 0, err
	}
	query, args, err := b.Columns("COUNT(*)").ToSql()
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.e.RetryRead(ctx, func() error {
		return s.e.Errors.Wrap(s.e.DB.QueryRowContext(ctx, query, args...).Scan(&n))
	})
	return n, err
}

// builder starts a statement over the query table with the engine's
// placeholders; names in it are the validated table and field names.
func (s *Store[S]) builder() sq.SelectBuilder {
	return sq.StatementBuilder.PlaceholderFormat(placeholders(s.e.Cat.Identity.Placeholder)).
		Select().From(s.table + " q")
}

func placeholders(p dialect.PlaceholderStyle) sq.PlaceholderFormat {
	switch p {
	case dialect.PlaceholderDollar:
		return sq.Dollar
	case dialect.PlaceholderAtP:
		return sq.AtP
	case dialect.PlaceholderColon:
		return sq.Colon
	}
	return sq.Question
}

func (s *Store[S]) selectWhere(where []Cond) (sq.SelectBuilder, error) {
	b := s.builder()
	for _, c := range where {
		f, err := s.fieldOf(c.projection, c.column)
		if err != nil {
			return b, err
		}
		col := "q." + f.decl.Column
		vals := make([]any, len(c.values))
		for i, v := range c.values {
			if vals[i], err = s.bindValue(f, v); err != nil {
				return b, err
			}
		}
		switch c.op {
		case "null":
			b = b.Where(col + " IS NULL")
		case "notnull":
			b = b.Where(col + " IS NOT NULL")
		case "in":
			if len(vals) == 0 {
				b = b.Where("1 = 0")
				continue
			}
			b = b.Where(col+" IN ("+sq.Placeholders(len(vals))+")", vals...)
		default:
			b = b.Where(col+" "+c.op+" ?", vals[0])
		}
	}
	return b, nil
}

// bindValue converts a finder's value the way the field's values are
// written: a registered converter for its type first, then the kind's.
func (s *Store[S]) bindValue(f *field[S], v any) (any, error) {
	if v == nil {
		return nil, &ValueError{Column: f.decl.Column, Value: v, Reason: "use IsNull for a missing value"}
	}
	if cv, ok := s.p.convs.m[typeOf(v)]; ok {
		v = cv.fn(v)
	}
	bv, err := nativeOf(f.decl)(v)
	if err != nil {
		return nil, err
	}
	if bv == nil {
		// A nil pointer: no column equals NULL.
		return nil, &ValueError{Column: f.decl.Column, Value: v, Reason: "use IsNull for a missing value"}
	}
	return s.rules.apply(f.decl, bv)
}

// run reads at most limit items of b (paged with the dialect's own paging
// clause) and each item's cursor.
func (s *Store[S]) run(ctx context.Context, rq engine.Querier, b sq.SelectBuilder, limit int, ord order[S]) ([]Item[S], []Cursor, error) {
	query, args, err := s.finish(b, limit).ToSql()
	if err != nil {
		return nil, nil, err
	}
	rows, err := rq.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, s.e.Errors.Wrap(err)
	}
	defer rows.Close()
	var items []Item[S]
	var cursors []Cursor
	for len(items) < limit && rows.Next() {
		var key string
		var payload sql.NullString
		var col any
		dest := []any{&key, &payload}
		if ord.field != nil {
			dest = append(dest, &col)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, s.e.Errors.Wrap(err)
		}
		it := Item[S]{Key: key, Value: s.p.init(key)}
		if payload.Valid {
			if err := s.p.codec.Unmarshal([]byte(payload.String), &it.Value); err != nil {
				return nil, nil, fmt.Errorf("projection %q: read model %q does not decode: %w", s.p.name, key, err)
			}
		}
		c, err := ord.cursor(s, key, col)
		if err != nil {
			return nil, nil, err
		}
		items, cursors = append(items, it), append(cursors, c)
	}
	return items, cursors, s.e.Errors.Wrap(rows.Err())
}

// finish joins each query row to its message and adds the paging clause.
func (s *Store[S]) finish(b sq.SelectBuilder, limit int) sq.SelectBuilder {
	b = b.LeftJoin(s.e.Names.Shared["read_model_capture_records_table"] + " r ON r.id = q.message_id")
	if clause := pagingClause(s.e.Cat); clause != "" {
		b = b.Suffix(clause, limit)
	}
	return b
}

// pagingClause is the dialect's paging clause with one ? for the row
// count, taken from its event range statement (which ends in ORDER BY
// global_position and its paging: LIMIT, FETCH FIRST, OFFSET … FETCH NEXT);
// "" when it does not end so: the rows are then read only as far as needed.
func pagingClause(cat *dialect.Catalogue) string {
	text := cat.Statements[dialect.EventRange]
	i := strings.LastIndex(text, "ORDER BY global_position")
	if i < 0 {
		return ""
	}
	clause := strings.TrimSpace(text[i+len("ORDER BY global_position"):])
	if strings.Count(clause, "#{limit}") != 1 || strings.ContainsAny(clause, "?$:@") {
		return ""
	}
	return strings.Replace(clause, "#{limit}", "?", 1)
}
