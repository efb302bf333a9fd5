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
package fbdriver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
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
	return &guardedStmt{s: st, conn: g}, nil
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
	s    stmt
	conn *guardedConn
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
	if s.conn.broken.Load() {
		return nil, driver.ErrBadConn
	}
	return s.s.Query(args)
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
	return s.s.QueryContext(ctx, args)
}
