package sqlcount

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
)

// rows wraps r, the rows of query q, to count its rows when CountRows is
// set and to run the Fault and AtEnd hooks when set (r as it is otherwise,
// so counting statements alone changes nothing of the driver's rows).
func (c *Counts) rows(ctx context.Context, q string, r driver.Rows) driver.Rows {
	if r == nil || !c.CountRows && c.Fault == nil && c.AtEnd == nil {
		return r
	}
	return &countedRows{Rows: r, c: c, ctx: ctx, q: q}
}

// countedRows counts the rows the driver delivers. It forwards every
// optional interface of driver.Rows database/sql uses; where the driver
// lacks one, it answers what database/sql assumes without it.
type countedRows struct {
	driver.Rows
	c   *Counts
	ctx context.Context
	q   string
	n   int // rows read so far
}

func (r *countedRows) Next(dest []driver.Value) error {
	if err := r.c.fault(r.ctx, r.q, r.n); err != nil {
		return err
	}
	err := r.Rows.Next(dest)
	switch {
	case err == nil:
		r.n++
		if r.c.CountRows {
			r.c.Rows.Add(1)
		}
	case errors.Is(err, io.EOF) && r.c.AtEnd != nil:
		r.c.AtEnd(r.ctx, r.q)
	}
	return err
}

func (r *countedRows) HasNextResultSet() bool {
	n, ok := r.Rows.(driver.RowsNextResultSet)
	return ok && n.HasNextResultSet()
}

func (r *countedRows) NextResultSet() error {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.NextResultSet()
	}
	return io.EOF
}

func (r *countedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *countedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *countedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *countedRows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *countedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
