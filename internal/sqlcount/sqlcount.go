// Package sqlcount wraps a database/sql driver to count the statements a
// program sends: every Exec and Query (direct or through a prepared
// statement), every BEGIN, COMMIT and ROLLBACK. Preparing a statement is
// not counted (the engine prepares each one once per connection). The
// bench prints statements per append with it, on any driver, without
// server-side statistics. Its Fault and AtEnd hooks make it a test's seam
// between database/sql and the real driver: a fault injected there (an
// error, a cancel at a chosen point) reaches the code under test as it
// would from the driver, with no behaviour of the database imitated.
package sqlcount

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Counts are the statements counted so far.
type Counts struct {
	Statements atomic.Int64 // Exec and Query calls
	Tx         atomic.Int64 // BEGIN, COMMIT, ROLLBACK
	// ByText, when set to true before Open, also counts every statement by
	// its SQL text (and BEGIN/COMMIT/ROLLBACK under those words), so a
	// caller can see where the statements go (Texts).
	ByText bool
	// Rows counts the rows the driver delivered (every driver-level Next
	// that returned a row) while CountRows, set before Open, is true: a
	// test can tell how far a result set was read when its first row was
	// used.
	Rows      atomic.Int64
	CountRows bool
	// Timed, set with ByText before Open, also sums each text's wall time
	// in the driver call (for a query: until its first rows came back).
	Timed bool
	// Fault, set before Open, is called before every Exec and Query (row
	// -1) and before each row a query's rows read from the driver (row 0,
	// 1, …), with the statement's context and SQL; an error it returns is
	// returned in place of the driver's answer (the driver never sees the
	// statement, or the row is not read). It runs on the caller's
	// goroutine and must be safe for concurrent use.
	Fault func(ctx context.Context, q string, row int) error
	// AtEnd, set before Open, is called when the driver reports a query's
	// rows exhausted, before database/sql sees the end (what follows the
	// last row: in a transaction, its commit).
	AtEnd func(ctx context.Context, q string)

	mu    sync.Mutex
	texts map[string]int64
	times map[string]time.Duration
}

// Text is one statement's SQL, how often it was sent and (Timed) the
// time its driver calls took in all.
type Text struct {
	SQL   string
	Count int64
	Time  time.Duration
}

// Texts returns the statements counted by text (ByText), most frequent
// first.
func (c *Counts) Texts() []Text {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Text, 0, len(c.texts))
	for q, n := range c.texts {
		out = append(out, Text{q, n, c.times[q]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].SQL < out[j].SQL
	})
	return out
}

// ResetTexts forgets the counts by text (the totals keep counting).
func (c *Counts) ResetTexts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts, c.times = nil, nil
}

// since adds the time since start to q's sum (Timed).
func (c *Counts) since(q string, start time.Time) {
	if !c.Timed || !c.ByText {
		return
	}
	d := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.times == nil {
		c.times = map[string]time.Duration{}
	}
	c.times[q] += d
}

func (c *Counts) stmt(q string) {
	c.Statements.Add(1)
	c.text(q)
}

func (c *Counts) tx(word string) {
	c.Tx.Add(1)
	c.text(word)
}

func (c *Counts) text(q string) {
	if !c.ByText {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.texts == nil {
		c.texts = map[string]int64{}
	}
	c.texts[q]++
}

// fault runs the Fault hook, if any.
func (c *Counts) fault(ctx context.Context, q string, row int) error {
	if c.Fault == nil {
		return nil
	}
	return c.Fault(ctx, q, row)
}

// Total is statements plus transaction control.
func (c *Counts) Total() int64 { return c.Statements.Load() + c.Tx.Load() }

// Open opens dsn with driverName, counting into c.
func Open(driverName, dsn string, c *Counts) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	drv := db.Driver()
	db.Close()
	var conn driver.Connector = dsnConnector{dsn: dsn, drv: drv}
	if dc, ok := drv.(driver.DriverContext); ok {
		if conn, err = dc.OpenConnector(dsn); err != nil {
			return nil, err
		}
	}
	return sql.OpenDB(connector{conn, c}), nil
}

type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (d dsnConnector) Connect(context.Context) (driver.Conn, error) { return d.drv.Open(d.dsn) }
func (d dsnConnector) Driver() driver.Driver                        { return d.drv }

type connector struct {
	inner driver.Connector
	c     *Counts
}

func (k connector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := k.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{cn, k.c}, nil
}

func (k connector) Driver() driver.Driver { return k.inner.Driver() }

// conn forwards every optional interface database/sql uses; where the
// driver lacks one, it answers driver.ErrSkip (database/sql's signal to
// take its generic path) or does what database/sql would.
type conn struct {
	driver.Conn
	c *Counts
}

func (c *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, q)
	} else {
		st, err = c.Conn.Prepare(q)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{st, c.c, q}, nil
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	defer c.c.since("BEGIN", time.Now())
	var tx driver.Tx
	var err error
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = c.Conn.Begin() //nolint:staticcheck // the driver has nothing else
	}
	if err != nil {
		return nil, err
	}
	c.c.tx("BEGIN")
	return &txn{tx, c.c}, nil
}

func (c *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if err := c.c.fault(ctx, q, -1); err != nil {
		return nil, err
	}
	start := time.Now()
	r, err := e.ExecContext(ctx, q, args)
	c.c.since(q, start)
	if !errors.Is(err, driver.ErrSkip) {
		c.c.stmt(q)
	}
	return r, err
}

func (c *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	e, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if err := c.c.fault(ctx, q, -1); err != nil {
		return nil, err
	}
	start := time.Now()
	r, err := e.QueryContext(ctx, q, args)
	c.c.since(q, start)
	if !errors.Is(err, driver.ErrSkip) {
		c.c.stmt(q)
	}
	return c.c.rows(ctx, q, r), err
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type stmt struct {
	driver.Stmt
	c *Counts
	q string
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.fault(ctx, s.q, -1); err != nil {
		return nil, err
	}
	s.c.stmt(s.q)
	defer s.c.since(s.q, time.Now())
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	return s.Stmt.Exec(vals) //nolint:staticcheck // the driver has nothing else
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.fault(ctx, s.q, -1); err != nil {
		return nil, err
	}
	s.c.stmt(s.q)
	defer s.c.since(s.q, time.Now())
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		r, err := q.QueryContext(ctx, args)
		return s.c.rows(ctx, s.q, r), err
	}
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	r, err := s.Stmt.Query(vals) //nolint:staticcheck // the driver has nothing else
	return s.c.rows(ctx, s.q, r), err
}

func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func values(args []driver.NamedValue) ([]driver.Value, error) {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("sqlcount: the driver takes no named arguments")
		}
		out[i] = a.Value
	}
	return out, nil
}

type txn struct {
	driver.Tx
	c *Counts
}

func (t *txn) Commit() error {
	t.c.tx("COMMIT")
	defer t.c.since("COMMIT", time.Now())
	return t.Tx.Commit()
}

func (t *txn) Rollback() error {
	t.c.tx("ROLLBACK")
	defer t.c.since("ROLLBACK", time.Now())
	return t.Tx.Rollback()
}
