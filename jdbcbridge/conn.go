package jdbcbridge

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one bridge connection = one JDBC connection on the server. database/sql never uses
// a conn concurrently, except that a context's cancellation may fire from another goroutine,
// which only writes a CANCEL frame (under wmu) or closes the socket.
type conn struct {
	cfg     *Config
	nc      net.Conn
	r       *bufio.Reader
	wmu     sync.Mutex
	enc     encoder
	reqID   uint32
	bad     atomic.Bool
	inTx    bool
	product string
	// maxRequest is the server's per-request limit from HELLO (0: unknown, not checked here).
	maxRequest int
	hdr        [8]byte
	rbuf       []byte
	// epoch and lastRead (time since epoch of the last bytes from the server) let a cancel's
	// grace period count silence, not time: a server still sending is alive.
	epoch    time.Time
	lastRead atomic.Int64
}

// progressReader reads from the server and notes when bytes last arrived.
type progressReader struct{ c *conn }

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.c.nc.Read(b)
	if n > 0 {
		p.c.lastRead.Store(int64(time.Since(p.c.epoch)))
	}
	return n, err
}

// silence runs a function once the server has sent nothing for a grace period.
type silence struct {
	mu    sync.Mutex
	t     *time.Timer
	ended bool
}

// afterSilence calls f once the server has sent no byte for grace, counting from now. Each
// time the period ends it looks at when bytes last arrived and waits again if that was
// within grace: on a loaded machine a server can take longer than grace to answer a
// cancelled request while still sending it.
func (c *conn) afterSilence(grace time.Duration, f func()) *silence {
	s := &silence{}
	start := time.Since(c.epoch)
	var check func()
	check = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended {
			return
		}
		last := max(start, time.Duration(c.lastRead.Load()))
		if wait := last + grace - time.Since(c.epoch); wait > 0 {
			s.t = time.AfterFunc(wait, check)
			return
		}
		s.ended = true
		f()
	}
	s.mu.Lock()
	s.t = time.AfterFunc(grace, check)
	s.mu.Unlock()
	return s
}

// Stop keeps f from running and reports whether it did: false when f has run.
func (s *silence) Stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.ended = true
	s.t.Stop()
	return true
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// start begins a new request frame in the connection's encoder.
func (c *conn) start(op byte) *encoder {
	c.reqID++
	c.enc.reset(c.reqID, op)
	return &c.enc
}

func (c *conn) markBad() {
	if c.bad.CompareAndSwap(false, true) {
		c.nc.Close()
	}
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(b)
	return err
}

func (c *conn) sendCancel(target uint32) {
	var b [13]byte
	binary.BigEndian.PutUint32(b[0:], 9)
	binary.BigEndian.PutUint32(b[4:], target+1<<31) // distinct request id, never answered
	b[8] = opCancel
	binary.BigEndian.PutUint32(b[9:], target)
	if c.write(b[:]) != nil {
		c.markBad()
	}
}

// roundTrip sends the frame in e and reads its response. If ctx is canceled meanwhile it sends
// a CANCEL for the request and, once the server has sent nothing for CancelGrace, closes the
// socket. A canceled call returns ctx.Err().
func (c *conn) roundTrip(ctx context.Context, e *encoder) (*decoder, error) {
	if c.bad.Load() {
		return nil, driver.ErrBadConn
	}
	id := c.reqID
	if n := len(e.b) - 4; c.maxRequest > 0 && n > c.maxRequest {
		// Refused before sending: the connection stays usable.
		return nil, &Error{State: "54000", Message: fmt.Sprintf("request of %d bytes is larger than the bridge's per-request limit of %d bytes", n, c.maxRequest)}
	}
	if err := c.write(e.frame()); err != nil {
		c.markBad()
		return nil, driver.ErrBadConn
	}
	var (
		stop     func() bool
		done     chan struct{}
		graceT   *silence
		graceHit atomic.Bool
	)
	if ctx.Done() != nil {
		done = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			defer close(done)
			c.sendCancel(id)
			graceT = c.afterSilence(c.cfg.CancelGrace, func() {
				graceHit.Store(true)
				c.markBad()
			})
		})
	}
	d, rerr := c.readResponse(id)
	canceled := false
	if stop != nil && !stop() {
		<-done
		canceled = true
		if !graceT.Stop() || graceHit.Load() {
			c.markBad()
		}
	}
	if rerr != nil {
		c.markBad()
		if canceled || ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var be *Error
		if errors.As(rerr, &be) {
			return nil, rerr
		}
		return nil, driver.ErrBadConn
	}
	if d.err != nil { // server-side error response
		if canceled {
			return nil, ctx.Err()
		}
		return nil, d.err
	}
	return d, nil
}

// readResponse reads frames until the one answering id. A decoder whose err is an *Error is an
// error response; a non-nil returned error means the connection is broken.
func (c *conn) readResponse(id uint32) (*decoder, error) {
	for {
		if _, err := io.ReadFull(c.r, c.hdr[:4]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(c.hdr[:4])
		if n < 5 || n > maxFrame {
			return nil, fmt.Errorf("jdbcbridge: bad frame length %d", n)
		}
		if cap(c.rbuf) < int(n) {
			c.rbuf = make([]byte, max(int(n), 512))
		}
		buf := c.rbuf[:n]
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		if len(c.rbuf) > 16<<20 {
			c.rbuf = nil // do not pin huge buffers
		}
		rid := binary.BigEndian.Uint32(buf)
		if rid != id {
			continue // stale answer; never expected, ignore
		}
		d := &decoder{b: buf, pos: 5}
		if buf[4] == statusError {
			e := &Error{State: d.str(), Code: int(d.i32()), Message: d.str()}
			if d.err != nil {
				return nil, d.err
			}
			d.err = e
		}
		return d, nil
	}
}

// Prepare implements driver.Conn.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares a statement on the server.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	e := c.start(opPrepare)
	e.str(query)
	d, err := c.roundTrip(ctx, e)
	if err != nil {
		return nil, err
	}
	s := &stmt{c: c, id: d.i32(), numInput: int(d.i32()), query: query}
	return s, d.err
}

// Close closes the JDBC connection on the server and the socket.
func (c *conn) Close() error {
	if !c.bad.Load() {
		e := c.start(opClose)
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_ = c.write(e.frame())
	}
	c.bad.Store(true)
	return c.nc.Close()
}

// Begin implements driver.Conn.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction with the given isolation level and read-only flag.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	iso := int32(-1)
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		iso = 1
	case sql.LevelReadCommitted:
		iso = 2
	case sql.LevelRepeatableRead:
		iso = 4
	case sql.LevelSerializable:
		iso = 8
	default:
		return nil, fmt.Errorf("jdbcbridge: isolation level %v is not supported", sql.IsolationLevel(opts.Isolation))
	}
	e := c.start(opBegin)
	e.i32(iso)
	if opts.ReadOnly {
		e.u8(1)
	} else {
		e.u8(0)
	}
	if _, err := c.roundTrip(ctx, e); err != nil {
		return nil, err
	}
	c.inTx = true
	return &tx{c: c}, nil
}

type tx struct{ c *conn }

// Commit commits the transaction.
func (t *tx) Commit() error { return t.end(opCommit) }

// Rollback rolls the transaction back.
func (t *tx) Rollback() error { return t.end(opRollback) }

func (t *tx) end(op byte) error {
	t.c.inTx = false
	_, err := t.c.roundTrip(context.Background(), t.c.start(op))
	return err
}

// Ping checks that the server and the JDBC connection are alive.
func (c *conn) Ping(ctx context.Context) error {
	_, err := c.roundTrip(ctx, c.start(opPing))
	if err != nil && !errors.Is(err, ctx.Err()) {
		var be *Error
		if !errors.As(err, &be) {
			return driver.ErrBadConn
		}
	}
	return err
}

// ResetSession is called before a pooled connection is reused. It rolls back a transaction
// left open on the server (which database/sql never does) and rejects broken connections.
func (c *conn) ResetSession(ctx context.Context) error {
	if c.bad.Load() {
		return driver.ErrBadConn
	}
	if c.inTx {
		c.inTx = false
		if _, err := c.roundTrip(ctx, c.start(opReset)); err != nil {
			return driver.ErrBadConn
		}
	}
	return nil
}

// IsValid reports whether the connection may be returned to the pool.
func (c *conn) IsValid() bool { return !c.bad.Load() }

var uuidArrayType = reflect.TypeOf([16]byte{})

// CheckNamedValue accepts the driver's native parameter types and 16-byte arrays (UUIDs);
// everything else goes through database/sql's default conversion.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case nil, bool, int64, float64, string, []byte, time.Time, Decimal:
		return nil
	case [16]byte:
		nv.Value = uuidValue(v)
		return nil
	}
	rv := reflect.ValueOf(nv.Value)
	if rv.Kind() == reflect.Array && rv.Type().ConvertibleTo(uuidArrayType) {
		nv.Value = uuidValue(rv.Convert(uuidArrayType).Interface().([16]byte))
		return nil
	}
	return driver.ErrSkip
}

// ExecContext executes a statement without a separate prepare round trip.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, 0, query, args, wantsKeys(query))
}

// QueryContext runs a query without a separate prepare round trip.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, 0, query, args)
}

func wantsKeys(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	return len(q) >= 6 && (strings.EqualFold(q[:6], "INSERT") || strings.EqualFold(q[:5], "MERGE"))
}

// encodeExecute writes an EXECUTE request for statement sid (0 = one-shot query).
func (c *conn) encodeExecute(sid int32, query string, args []driver.NamedValue, flags byte) (*encoder, error) {
	e := c.start(opExecute)
	e.i32(sid)
	if sid == 0 {
		e.str(query)
	}
	e.u8(flags)
	e.i32(int32(c.cfg.FetchSize))
	e.i32(int32(len(args)))
	for _, a := range args {
		if a.Name != "" {
			return nil, fmt.Errorf("jdbcbridge: named parameters are not supported (got %q)", a.Name)
		}
		if err := e.value(a.Value); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (c *conn) exec(ctx context.Context, sid int32, query string, args []driver.NamedValue, keys bool) (driver.Result, error) {
	var flags byte
	if keys {
		flags = flagGeneratedKeys
	}
	e, err := c.encodeExecute(sid, query, args, flags)
	if err != nil {
		return nil, err
	}
	d, err := c.roundTrip(ctx, e)
	if err != nil {
		return nil, err
	}
	switch d.u8() {
	case resultUpdate:
		res := &result{rows: d.i64()}
		if d.u8() == 1 {
			ncols := d.i32()
			nrows := d.i32()
			for r := int32(0); r < nrows; r++ {
				for k := int32(0); k < ncols; k++ {
					v := d.value()
					if r == 0 && k == 0 {
						if n, ok := v.(int64); ok {
							res.lastID, res.hasID = n, true
						}
					}
				}
			}
		}
		return res, d.err
	default:
		// A query passed to Exec: discard its rows.
		rows, err := c.rowsFrom(ctx, d)
		if err != nil {
			return nil, err
		}
		return &result{rows: 0}, rows.Close()
	}
}

func (c *conn) query(ctx context.Context, sid int32, query string, args []driver.NamedValue) (driver.Rows, error) {
	e, err := c.encodeExecute(sid, query, args, 0)
	if err != nil {
		return nil, err
	}
	d, err := c.roundTrip(ctx, e)
	if err != nil {
		return nil, err
	}
	if kind := d.u8(); kind == resultUpdate {
		return &rows{c: c, done: true}, d.err
	}
	return c.rowsFrom(ctx, d)
}

type result struct {
	rows   int64
	lastID int64
	hasID  bool
}

// LastInsertId returns the first generated key of an INSERT/MERGE, when it is an integer.
func (r *result) LastInsertId() (int64, error) {
	if !r.hasID {
		return 0, errors.New("jdbcbridge: no integer generated key available")
	}
	return r.lastID, nil
}

// RowsAffected returns the JDBC update count.
func (r *result) RowsAffected() (int64, error) { return r.rows, nil }
