package conformance

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync/atomic"
)

// countingDB opens a *sql.DB on env's database whose driver counts every
// statement the database runs (an Exec or Query on a connection or a
// prepared statement; a prepare is not counted, a driver.ErrSkip fallback
// is counted once). The engine has no statement hook; the driver is the
// one place every statement passes.
func countingDB(t T, env *Env) (*sql.DB, *atomic.Int64) {
	t.Helper()
	n := &atomic.Int64{}
	var conn driver.Connector
	d := env.DB.Driver()
	if dc, ok := d.(driver.DriverContext); ok {
		c, err := dc.OpenConnector(env.DSN)
		if err != nil {
			t.Fatalf("counting driver: %v", err)
		}
		conn = &countConnector{inner: c, n: n}
	} else {
		conn = &countConnector{drv: d, dsn: env.DSN, n: n}
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db, n
}

type countConnector struct {
	inner driver.Connector
	drv   driver.Driver
	dsn   string
	n     *atomic.Int64
}

func (c *countConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var (
		cn  driver.Conn
		err error
	)
	if c.inner != nil {
		cn, err = c.inner.Connect(ctx)
	} else {
		cn, err = c.drv.Open(c.dsn)
	}
	if err != nil {
		return nil, err
	}
	return &countConn{Conn: cn, n: c.n}, nil
}

func (c *countConnector) Driver() driver.Driver {
	if c.inner != nil {
		return c.inner.Driver()
	}
	return c.drv
}

// countConn forwards every optional interface database/sql uses, answering
// driver.ErrSkip (or the default) where the wrapped connection lacks one.
type countConn struct {
	driver.Conn
	n *atomic.Int64
}

func (c *countConn) count(err error) error {
	if err != driver.ErrSkip {
		c.n.Add(1)
	}
	return err
}

func (c *countConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	var (
		st  driver.Stmt
		err error
	)
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, q)
	} else {
		st, err = c.Conn.Prepare(q)
	}
	if err != nil {
		return nil, err
	}
	return &countStmt{Stmt: st, n: c.n}, nil
}

func (c *countConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // the wrapped driver's only form
}

func (c *countConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	x, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := x.ExecContext(ctx, q, args)
	return r, c.count(err)
}

func (c *countConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	x, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := x.QueryContext(ctx, q, args)
	return r, c.count(err)
}

func (c *countConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *countConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *countConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *countConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type countStmt struct {
	driver.Stmt
	n *atomic.Int64
}

func (s *countStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.n.Add(1)
	if x, ok := s.Stmt.(driver.StmtExecContext); ok {
		return x.ExecContext(ctx, args)
	}
	return s.Stmt.Exec(values(args)) //nolint:staticcheck // the wrapped driver's only form
}

func (s *countStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.n.Add(1)
	if x, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return x.QueryContext(ctx, args)
	}
	return s.Stmt.Query(values(args)) //nolint:staticcheck // the wrapped driver's only form
}

func (s *countStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func values(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
