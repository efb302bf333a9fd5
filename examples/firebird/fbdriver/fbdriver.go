// Package fbdriver registers the database/sql driver "firebirdsql-guarded":
// github.com/nakagami/firebirdsql with one defect guarded against.
//
// When a transaction fails to begin (a context that ends during the
// round-trip, a lost attachment), firebirdsql leaves its connection with no
// transaction at all. Every later use of that connection dereferences it:
// closing one of its prepared statements — which database/sql does when it
// discards the connection — or running one panics with a nil pointer,
// taking the whole process down. The guard marks such a connection broken:
// database/sql discards it (IsValid, ResetSession), its statements are not
// sent to the driver again (Firebird frees them when the attachment ends),
// and any other use returns driver.ErrBadConn so database/sql retries on
// another connection.
//
// It also gives a statement more than one cursor. A firebirdsql statement
// is one server-side statement with one cursor, but database/sql hands a
// transaction the same driver statement each time it runs one prepared
// statement (Tx.StmtContext), so running it again while an earlier result
// is still being read fails with "Attempt to reopen an open cursor" (SQL
// code -502). The guard runs such a second query on a statement of its own,
// freed when its rows close.
package fbdriver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

	_ "github.com/nakagami/firebirdsql" // registers "firebirdsql", the driver guarded here
)

// Name is the database/sql name this package registers.
const Name = "firebirdsql-guarded"

func init() {
	db, err := sql.Open("firebirdsql", "")
	if err != nil {
		panic(err) // only if firebirdsql is not registered, which the import rules out
	}
	sql.Register(Name, guardedDriver{inner: db.Driver()})
	_ = db.Close()
}

// conn is what the guard needs of a firebirdsql connection: the interfaces
// database/sql uses, all of which firebirdsql's connection implements.
type conn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.NamedValueChecker
	driver.Validator
}

type guardedDriver struct{ inner driver.Driver }

func (d guardedDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.inner.Open(dsn)
	if err != nil {
		return nil, err
	}
	return wrap(c)
}

// OpenConnector keeps firebirdsql's connector, whose Connect is bounded by
// the caller's context.
func (d guardedDriver) OpenConnector(dsn string) (driver.Connector, error) {
	dc, ok := d.inner.(driver.DriverContext)
	if !ok {
		return dsnConnector{d: d, dsn: dsn}, nil
	}
	inner, err := dc.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return connector{inner: inner, d: d}, nil
}

type connector struct {
	inner driver.Connector
	d     guardedDriver
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	raw, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrap(raw)
}

func (c connector) Driver() driver.Driver { return c.d }

type dsnConnector struct {
	d   guardedDriver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

func wrap(raw driver.Conn) (driver.Conn, error) {
	c, ok := raw.(conn)
	if !ok {
		_ = raw.Close()
		return nil, fmt.Errorf("fbdriver: firebirdsql's connection %T lacks an interface the guard forwards", raw)
	}
	return &guardedConn{c: c}, nil
}

// guardedConn forwards to firebirdsql until a begin fails, then refuses.
type guardedConn struct {
	c      conn
	broken atomic.Bool
}

func (g *guardedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if g.broken.Load() {
		return nil, driver.ErrBadConn
	}
	tx, err := g.c.BeginTx(ctx, opts)
	if err != nil {
		g.broken.Store(true)
		return nil, err
	}
	return tx, nil
}

// Begin is driver.Conn's; database/sql calls BeginTx.
func (g *guardedConn) Begin() (driver.Tx, error) {
	return g.BeginTx(context.Background(), driver.TxOptions{})
}

func (g *guardedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if g.broken.Load() {
		return nil, driver.ErrBadConn
	}
	s, err := g.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := s.(stmt)
	if !ok {
		_ = s.Close()
		return nil, fmt.Errorf("fbdriver: firebirdsql's statement %T lacks an interface the guard forwards", s)
	}
	return &guardedStmt{s: st, conn: g, query: query}, nil
}

func (g *guardedConn) Prepare(query string) (driver.Stmt, error) {
	return g.PrepareContext(context.Background(), query)
}

func (g *guardedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if g.broken.Load() {
		return nil, driver.ErrBadConn
	}
	return g.c.ExecContext(ctx, query, args)
}

func (g *guardedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if g.broken.Load() {
		return nil, driver.ErrBadConn
	}
	return g.c.QueryContext(ctx, query, args)
}

func (g *guardedConn) Ping(ctx context.Context) error {
	if g.broken.Load() {
		return driver.ErrBadConn
	}
	return g.c.Ping(ctx)
}

func (g *guardedConn) CheckNamedValue(nv *driver.NamedValue) error { return g.c.CheckNamedValue(nv) }

// IsValid makes database/sql discard a broken connection instead of
// pooling it.
func (g *guardedConn) IsValid() bool { return !g.broken.Load() && g.c.IsValid() }

// ResetSession refuses a broken connection before database/sql reuses it.
func (g *guardedConn) ResetSession(context.Context) error {
	if g.broken.Load() {
		return driver.ErrBadConn
	}
	return nil
}

func (g *guardedConn) Close() error { return g.c.Close() }

// stmt is what the guard needs of a firebirdsql statement.
type stmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// guardedStmt is a statement of a guardedConn.
type guardedStmt struct {
	s     stmt
	conn  *guardedConn
	query string
	// open counts s's result sets not yet closed (0 or 1: a second query
	// while one is open runs on a statement of its own).
	open atomic.Int32
}

// Close skips firebirdsql's close on a broken connection (the one that
// panics); the server frees the statement with the attachment.
func (s *guardedStmt) Close() error {
	if s.conn.broken.Load() {
		return nil
	}
	return s.s.Close()
}

func (s *guardedStmt) NumInput() int { return s.s.NumInput() }

func (s *guardedStmt) Exec(args []driver.Value) (driver.Result, error) {
	if s.conn.broken.Load() {
		return nil, driver.ErrBadConn
	}
	return s.s.Exec(args)
}

func (s *guardedStmt) Query(args []driver.Value) (driver.Rows, error) {
	named := make([]driver.NamedValue, len(args))
	for i, v := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return s.QueryContext(context.Background(), named)
}

func (s *guardedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.conn.broken.Load() {
		return nil, driver.ErrBadConn
	}
	return s.s.ExecContext(ctx, args)
}

func (s *guardedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.conn.broken.Load() {
		return nil, driver.ErrBadConn
	}
	if !s.open.CompareAndSwap(0, 1) {
		return s.queryApart(ctx, args)
	}
	r, err := s.s.QueryContext(ctx, args)
	if err != nil {
		s.open.Store(0)
		return nil, s.conn.cursorLeft(err)
	}
	return &guardedRows{Rows: r, conn: s.conn, closed: func() error { s.open.Store(0); return nil }}, nil
}

// cursorLeft turns "Attempt to reopen an open cursor" into a broken
// connection: a cursor whose close failed is still open on the server, and
// the statement cannot run on this attachment again. Nothing ran, so
// database/sql may retry on another connection (outside a transaction).
func (g *guardedConn) cursorLeft(err error) error {
	if strings.Contains(err.Error(), "Attempt to reopen an open cursor") {
		g.broken.Store(true)
		return fmt.Errorf("%w (%v)", driver.ErrBadConn, err)
	}
	return err
}

// queryApart runs the statement's query on a statement of its own, for a
// cursor opened while s's own one is still open.
func (s *guardedStmt) queryApart(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	apart, err := s.conn.PrepareContext(ctx, s.query)
	if err != nil {
		return nil, err
	}
	own := apart.(*guardedStmt)
	r, err := own.s.QueryContext(ctx, args)
	if err != nil {
		_ = own.Close()
		return nil, s.conn.cursorLeft(err)
	}
	return &guardedRows{Rows: r, conn: s.conn, closed: own.Close}, nil
}

// guardedRows is a result set of a guardedStmt: closing it frees the
// statement's cursor for its next query (or frees the statement of its
// own).
type guardedRows struct {
	driver.Rows
	conn   *guardedConn
	closed func() error
	done   atomic.Bool
}

// Close closes the cursor. A close that failed may leave it open on the
// server, where the statement's next query would meet it: the connection
// is then broken (database/sql discards it).
func (r *guardedRows) Close() error {
	err := r.Rows.Close()
	if err != nil {
		r.conn.broken.Store(true)
	}
	if r.done.CompareAndSwap(false, true) {
		err = errors.Join(err, r.closed())
	}
	return err
}

// The column-type methods are firebirdsql's; database/sql's ColumnTypes
// reads them.
type columnTypes interface {
	ColumnTypeDatabaseTypeName(int) string
	ColumnTypeLength(int) (int64, bool)
	ColumnTypeNullable(int) (bool, bool)
	ColumnTypePrecisionScale(int) (int64, int64, bool)
	ColumnTypeScanType(int) reflect.Type
}

func (r *guardedRows) ColumnTypeDatabaseTypeName(i int) string {
	if c, ok := r.Rows.(columnTypes); ok {
		return c.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *guardedRows) ColumnTypeLength(i int) (int64, bool) {
	if c, ok := r.Rows.(columnTypes); ok {
		return c.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *guardedRows) ColumnTypeNullable(i int) (bool, bool) {
	if c, ok := r.Rows.(columnTypes); ok {
		return c.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *guardedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if c, ok := r.Rows.(columnTypes); ok {
		return c.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *guardedRows) ColumnTypeScanType(i int) reflect.Type {
	if c, ok := r.Rows.(columnTypes); ok {
		return c.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
