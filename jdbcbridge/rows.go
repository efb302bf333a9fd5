package jdbcbridge

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
)

// stmt is a server-side prepared statement.
type stmt struct {
	c        *conn
	id       int32
	numInput int
	query    string
	closed   bool
}

var (
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

// Close releases the statement on the server.
func (s *stmt) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.c.bad.Load() {
		return nil
	}
	e := s.c.start(opCloseStmt)
	e.i32(s.id)
	_, err := s.c.roundTrip(context.Background(), e)
	return err
}

// NumInput returns the number of '?' parameters, or -1 when the JDBC driver cannot tell.
func (s *stmt) NumInput() int { return s.numInput }

// CheckNamedValue delegates to the connection.
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error { return s.c.CheckNamedValue(nv) }

// Exec implements driver.Stmt.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

// Query implements driver.Stmt.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

// ExecContext executes the prepared statement.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.id, "", args, true)
}

// QueryContext runs the prepared query.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.query(ctx, s.id, "", args)
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

type column struct {
	name      string
	typeName  string
	jdbcType  int32
	nullable  byte
	precision int32
	scale     int32
	kind      byte
}

// rows streams a server cursor batch by batch.
type rows struct {
	c      *conn
	ctx    context.Context
	cols   []column
	cursor int32
	batch  *decoder // current batch, positioned at the next row
	left   int32    // rows left in batch
	done   bool     // the server has sent the last batch (cursor closed there)
	closed bool
}

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*rows)(nil)
)

// rowsFrom decodes the cursor header and the first batch of an EXECUTE response.
func (c *conn) rowsFrom(ctx context.Context, d *decoder) (*rows, error) {
	r := &rows{c: c, ctx: ctx, cursor: d.i32()}
	n := d.i32()
	if n < 0 || n > 1<<16 {
		return nil, errShortFrame
	}
	r.cols = make([]column, n)
	for i := range r.cols {
		r.cols[i] = column{
			name: d.str(), typeName: d.str(), jdbcType: d.i32(), nullable: d.u8(),
			precision: d.i32(), scale: d.i32(), kind: d.u8(),
		}
	}
	r.setBatch(d)
	if d.err != nil {
		c.markBad()
		return nil, d.err
	}
	return r, nil
}

func (r *rows) setBatch(d *decoder) {
	r.c.rbuf = nil // the batch keeps the read buffer; LOB reads and fetches get a new one
	r.batch = d
	r.left = d.i32()
	// The done flag trails the rows; peek at it now.
	if len(d.b) > 0 && d.err == nil {
		r.done = d.b[len(d.b)-1] == 1
	}
}

// Columns returns the column labels.
func (r *rows) Columns() []string {
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.name
	}
	return names
}

// Close closes the server cursor if it is still open.
func (r *rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.batch = nil
	if r.done || r.c.bad.Load() {
		return nil
	}
	e := r.c.start(opCloseCursor)
	e.i32(r.cursor)
	_, err := r.c.roundTrip(context.Background(), e)
	return err
}

// Next decodes the next row, fetching a new batch or large objects as needed.
func (r *rows) Next(dest []driver.Value) error {
	if r.closed {
		return io.EOF
	}
	for r.left == 0 {
		if r.done {
			return io.EOF
		}
		e := r.c.start(opFetch)
		e.i32(r.cursor)
		e.i32(int32(r.c.cfg.FetchSize))
		d, err := r.c.roundTrip(r.ctx, e)
		if err != nil {
			return err
		}
		r.setBatch(d)
	}
	r.left--
	for i := range r.cols {
		v := r.batch.value()
		if ref, ok := v.(lobRef); ok {
			lv, err := r.readLob(ref)
			if err != nil {
				return err
			}
			v = lv
		}
		if i < len(dest) {
			dest[i] = v
		}
	}
	if r.batch.err != nil {
		r.c.markBad()
		return r.batch.err
	}
	return nil
}

// lobChunks counts LOB chunk round trips (tests check that the chunked path is exercised).
var lobChunks atomic.Int64

// lobChunkSize is the number of bytes (BLOB) or UTF-16 units (CLOB) requested per chunk.
const lobChunkSize = 256 << 10

// readLob fetches a large object in chunks.
func (r *rows) readLob(ref lobRef) (any, error) {
	var sb strings.Builder
	var bb []byte
	if ref.clob {
		sb.Grow(int(min(ref.length, 64<<20)))
	} else {
		bb = make([]byte, 0, min(ref.length, 64<<20))
	}
	batch := r.batch
	defer func() { r.batch = batch }()
	for {
		lobChunks.Add(1)
		e := r.c.start(opLobRead)
		e.i32(ref.id)
		e.i32(lobChunkSize)
		d, err := r.c.roundTrip(r.ctx, e)
		if err != nil {
			return nil, err
		}
		if ref.clob {
			sb.Write(d.raw())
		} else {
			bb = append(bb, d.raw()...)
		}
		eof := d.u8() == 1
		if d.err != nil {
			return nil, d.err
		}
		if eof {
			break
		}
	}
	if ref.clob {
		return sb.String(), nil
	}
	return bb, nil
}

// ColumnTypeDatabaseTypeName returns the JDBC type name (e.g. "CHARACTER VARYING", "UUID").
func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return strings.ToUpper(r.cols[i].typeName) }

// ColumnTypeNullable reports the JDBC nullability of column i.
func (r *rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	switch r.cols[i].nullable {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}

// ColumnTypePrecisionScale reports precision and scale for DECIMAL/NUMERIC columns.
func (r *rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if r.cols[i].kind != tagDecimal {
		return 0, 0, false
	}
	return int64(r.cols[i].precision), int64(r.cols[i].scale), true
}

var (
	typeBool    = reflect.TypeOf(false)
	typeInt64   = reflect.TypeOf(int64(0))
	typeFloat64 = reflect.TypeOf(float64(0))
	typeString  = reflect.TypeOf("")
	typeBytes   = reflect.TypeOf([]byte(nil))
	typeTime    = reflect.TypeOf(time.Time{})
	typeAny     = reflect.TypeOf((*any)(nil)).Elem()
)

// ColumnTypeScanType returns the Go type values of column i are returned as.
func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	switch r.cols[i].kind {
	case tagBool:
		return typeBool
	case tagInt64:
		return typeInt64
	case tagDouble:
		return typeFloat64
	case tagDecimal, tagString, tagClob, tagUUID:
		return typeString
	case tagBytes, tagBlob:
		return typeBytes
	case tagDate, tagTime, tagTimestamp, tagTimestampTZ:
		return typeTime
	}
	return typeAny
}
