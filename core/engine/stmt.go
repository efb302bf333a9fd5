package engine

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Querier is what statements run on: *sql.DB, *sql.Tx or *sql.Conn.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func cacheKey(id string, tables map[string]string) string {
	if len(tables) == 0 {
		return id
	}
	keys := make([]string, 0, len(tables))
	for k := range tables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(id)
	for _, k := range keys {
		b.WriteString("|" + k + "=" + tables[k])
	}
	return b.String()
}

// Compile returns the statement id filled with the shared names plus
// tables (per-table placeholders such as event_store_table or
// position_table), compiled to the dialect's placeholders. Results are cached.
func (e *Engine) Compile(id dialect.StatementID, tables map[string]string) (dialect.Compiled, error) {
	key := cacheKey(string(id), tables)
	e.mu.Lock()
	c, ok := e.compiled[key]
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	tmpl, ok := e.Cat.Statements[id]
	if !ok || tmpl == "" {
		return dialect.Compiled{}, fmt.Errorf("dialect %s has no statement %s", e.Cat.Identity.Name, id)
	}
	c, err := e.CompileText(tmpl, tables)
	if err != nil {
		return c, fmt.Errorf("statement %s: %w", id, err)
	}
	e.mu.Lock()
	e.compiled[key] = c
	e.mu.Unlock()
	return c, nil
}

// CompileText fills and compiles an arbitrary catalogue template.
func (e *Engine) CompileText(tmpl string, tables map[string]string) (dialect.Compiled, error) {
	vals := make(map[string]string, len(e.Names.Shared)+len(tables))
	for k, v := range e.Names.Shared {
		vals[k] = v
	}
	for k, v := range tables {
		vals[k] = v
	}
	filled, err := dialect.Fill(tmpl, vals)
	if err != nil {
		return dialect.Compiled{}, err
	}
	return dialect.Compile(filled, e.Cat.Identity.Placeholder), nil
}

// Prepared returns a statement prepared once on the engine's *sql.DB. Use
// tx.StmtContext to run it inside a transaction. A prepare error is
// classified (see Engine.Exec); errors of the statement's own Exec and Query
// are the driver's: pass them through e.Errors.Wrap.
func (e *Engine) Prepared(ctx context.Context, key, query string) (*sql.Stmt, error) {
	e.mu.Lock()
	st, ok := e.prepared[key]
	e.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := e.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, e.Errors.Wrap(err)
	}
	e.mu.Lock()
	if prev, ok := e.prepared[key]; ok {
		e.mu.Unlock()
		st.Close()
		return prev, nil
	}
	e.prepared[key] = st
	e.mu.Unlock()
	return st, nil
}

// forget reports whether err says the statement prepared under key was
// invalidated by a schema change (dialect.ErrStatementInvalidated: it did
// not run) and, if so, drops it from the cache, so the next Prepared
// prepares it afresh. Callers then run the statement once more.
func (e *Engine) forget(key string, err error) bool {
	if err == nil || !e.Errors.Is(err, dialect.ErrStatementInvalidated) {
		return false
	}
	e.mu.Lock()
	st, ok := e.prepared[key]
	delete(e.prepared, key)
	e.mu.Unlock()
	if ok {
		st.Close()
	}
	return true
}

// Close releases prepared statements (not the *sql.DB, which is the caller's).
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, st := range e.prepared {
		st.Close()
		delete(e.prepared, k)
	}
	return nil
}

func (e *Engine) bind(id dialect.StatementID, tables map[string]string, args map[string]any) (string, []any, error) {
	c, err := e.Compile(id, tables)
	if err != nil {
		return "", nil, err
	}
	a, err := c.Args(args)
	if err != nil {
		return "", nil, fmt.Errorf("statement %s: %w", id, err)
	}
	return c.SQL, a, nil
}

// stmtOn returns the statement prepared once on the engine's *sql.DB, bound
// to q when q is one of its transactions. Catalogue statements are fixed at
// startup, so preparing them saves a parse per call, and on drivers that
// prepare every parameterised query (go-sql-driver/mysql, the JDBC bridge)
// a round trip per call. nil means: run the text on q as it is.
func (e *Engine) stmtOn(ctx context.Context, q Querier, query string) *sql.Stmt {
	switch x := q.(type) {
	case *sql.DB:
		if x != e.DB {
			return nil
		}
		st, err := e.Prepared(ctx, query, query)
		if err != nil {
			return nil
		}
		return st
	case *sql.Tx:
		st, err := e.Prepared(ctx, query, query)
		if err != nil {
			return nil
		}
		return x.StmtContext(ctx, st)
	}
	return nil
}

// Exec runs statement id on q. It is the untyped entry point: the core
// calls the catalogue through core/stmt's typed functions, built on Exec,
// Query and QueryRow; the suite and tools run statements by id here.
//
// Errors of Exec, Query and QueryRow (and of ExecText) are classified here,
// once, with the dialect's rules: a classified error is an *sqlerr.Error, so
// errors.Is(err, sqlerr.ErrDeadlock) (or ErrLockTimeout, ErrUniqueViolation,
// …, sqlerr.ErrTransient) holds and errors.As still reaches the driver's
// error. Unclassified errors, sql.ErrNoRows and context errors come back as
// they are.
func (e *Engine) Exec(ctx context.Context, q Querier, id dialect.StatementID, tables map[string]string, args map[string]any) (sql.Result, error) {
	// Exec is the engine's write path: a read-only engine refuses it.
	if err := e.refuse("statement " + string(id)); err != nil {
		return nil, err
	}
	s, a, err := e.bind(id, tables, args)
	if err != nil {
		return nil, err
	}
	return e.exec(ctx, q, s, a)
}

// ExecText fills tmpl (a catalogue-style template: ${table} placeholders
// from the shared names and tables, #{name} binds from args), runs it on q
// unprepared and classifies its error as Exec does. For statements that are
// not in the catalogue; compiled on every call.
func (e *Engine) ExecText(ctx context.Context, q Querier, tmpl string, tables map[string]string, args map[string]any) (sql.Result, error) {
	if err := e.refuse("a statement"); err != nil {
		return nil, err
	}
	c, err := e.CompileText(tmpl, tables)
	if err != nil {
		return nil, err
	}
	a, err := c.Args(args)
	if err != nil {
		return nil, err
	}
	r, err := q.ExecContext(ctx, c.SQL, a...)
	return r, e.Errors.Wrap(err)
}

func (e *Engine) exec(ctx context.Context, q Querier, s string, a []any) (sql.Result, error) {
	var r sql.Result
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		st := e.stmtOn(ctx, q, s)
		if st == nil {
			r, err = q.ExecContext(ctx, s, a...)
			break
		}
		if r, err = st.ExecContext(ctx, a...); !e.forget(s, err) {
			break
		}
	}
	return r, e.Errors.Wrap(err)
}

// Query runs statement id on q and returns its rows. The error returned is
// classified (see Exec); errors of the rows' Next, Scan and Err are the
// driver's (*sql.Rows is a concrete type): pass them through e.Errors.Wrap.
func (e *Engine) Query(ctx context.Context, q Querier, id dialect.StatementID, tables map[string]string, args map[string]any) (*sql.Rows, error) {
	s, a, err := e.bind(id, tables, args)
	if err != nil {
		return nil, err
	}
	return e.query(ctx, q, s, a)
}

// query runs s on q, prepared where it can be (see Exec), once more when a
// schema change invalidated the prepared statement; the error is classified.
func (e *Engine) query(ctx context.Context, q Querier, s string, a []any) (*sql.Rows, error) {
	var rows *sql.Rows
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		st := e.stmtOn(ctx, q, s)
		if st == nil {
			rows, err = q.QueryContext(ctx, s, a...)
			break
		}
		if rows, err = st.QueryContext(ctx, a...); !e.forget(s, err) {
			break
		}
	}
	return rows, e.Errors.Wrap(err)
}

// errRow is a *sql.Row stand-in carrying a bind error to Scan.
type errRow struct{ err error }

// Scan returns the bind error.
func (r errRow) Scan(...any) error { return r.err }

// classifiedRow classifies the error of its row's Scan (where database/sql
// reports a query's error). A prepared statement invalidated by a schema
// change is run once more, freshly prepared (see Engine.forget).
type classifiedRow struct {
	row   *sql.Row
	e     *Engine
	query string
	retry func() *sql.Row
}

// Scan scans the row; its error is classified (see Exec).
func (r classifiedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if r.retry != nil && r.e.forget(r.query, err) {
		err = r.retry().Scan(dest...)
	}
	return r.e.Errors.Wrap(err)
}

// Row is what QueryRow returns: a row whose Scan returns the classified
// query error, or a bind error.
type Row interface{ Scan(dest ...any) error }

// QueryRow runs statement id on q and returns its single row. Scan's error
// is classified (see Exec); sql.ErrNoRows comes back as it is.
func (e *Engine) QueryRow(ctx context.Context, q Querier, id dialect.StatementID, tables map[string]string, args map[string]any) Row {
	s, a, err := e.bind(id, tables, args)
	if err != nil {
		return errRow{err}
	}
	return e.queryRow(ctx, q, s, a)
}

// ExecCompiled runs a statement the core wrote itself (compiled once with
// CompileText) on q, prepared and classified as Exec's are; a read-only
// engine refuses it before any SQL.
func (e *Engine) ExecCompiled(ctx context.Context, q Querier, c dialect.Compiled, args map[string]any) (sql.Result, error) {
	if err := e.refuse("a statement"); err != nil {
		return nil, err
	}
	a, err := c.Args(args)
	if err != nil {
		return nil, err
	}
	return e.exec(ctx, q, c.SQL, a)
}

// QueryRowCompiled is QueryRow for a statement compiled with CompileText.
func (e *Engine) QueryRowCompiled(ctx context.Context, q Querier, c dialect.Compiled, args map[string]any) Row {
	a, err := c.Args(args)
	if err != nil {
		return errRow{err}
	}
	return e.queryRow(ctx, q, c.SQL, a)
}

// QueryCompiled is Query for a statement compiled with CompileText.
func (e *Engine) QueryCompiled(ctx context.Context, q Querier, c dialect.Compiled, args map[string]any) (*sql.Rows, error) {
	a, err := c.Args(args)
	if err != nil {
		return nil, err
	}
	return e.query(ctx, q, c.SQL, a)
}

func (e *Engine) queryRow(ctx context.Context, q Querier, s string, a []any) Row {
	if st := e.stmtOn(ctx, q, s); st != nil {
		retry := func() *sql.Row {
			if st := e.stmtOn(ctx, q, s); st != nil {
				return st.QueryRowContext(ctx, a...)
			}
			return q.QueryRowContext(ctx, s, a...)
		}
		return classifiedRow{st.QueryRowContext(ctx, a...), e, s, retry}
	}
	return classifiedRow{q.QueryRowContext(ctx, s, a...), e, s, nil}
}

// Has reports whether the catalogue carries a non-empty statement id.
func (e *Engine) Has(id dialect.StatementID) bool {
	return strings.TrimSpace(e.Cat.Statements[id]) != ""
}
