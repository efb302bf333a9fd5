package engine

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// TransientRetry is how the core retries work the database undid with a
// transient error (sqlerr.IsTransient: deadlock, serialization or Galera
// certification failure, lock timeout, lost connection): up to Attempts
// tries in all, none started after Budget, sleeping a random time in
// [0, min(Max, Initial·2^n)] before try n+1 ("full jitter": writers that
// failed together do not retry together). A zero field takes
// DefaultTransientRetry's value.
type TransientRetry struct {
	// Attempts is the number of tries, the first included; 1 turns retries
	// off. It backstops Budget: tries are not independent, so the bound
	// is set in time (docs/deployments.md has the Galera starvation runs
	// that sized both).
	Attempts int
	// Budget bounds the time spent trying: no new try starts once Budget
	// has passed since the first began, so a slow transient error (a lock
	// wait timeout) is not tried again and a server that is down is
	// reported after Budget. The caller's ctx bounds it further.
	Budget time.Duration
	// Initial is the first backoff's ceiling (about one round trip).
	Initial time.Duration
	// Max caps every backoff.
	Max time.Duration
	// Unbounded drops Attempts and Budget: only ctx ends the tries. For
	// work that must wait out an outage rather than fail (a consumer's
	// apply, which would otherwise halt the consumer).
	Unbounded bool
	// OnRetry, when set, is called before each retry with the number of
	// the try that failed (0 for the first) and its error; it runs on the
	// retrying goroutine, so it must be quick.
	OnRetry func(attempt int, err error)
}

// DefaultTransientRetry is the bound every core transaction uses unless
// its caller says otherwise: 100 tries within 10 s, backoff from 2 ms to
// 200 ms.
var DefaultTransientRetry = TransientRetry{Attempts: 100, Budget: 10 * time.Second, Initial: 2 * time.Millisecond, Max: 200 * time.Millisecond}

// WithDefaults returns r with every zero field set from
// DefaultTransientRetry.
func (r TransientRetry) WithDefaults() TransientRetry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultTransientRetry.Attempts
	}
	if r.Budget <= 0 {
		r.Budget = DefaultTransientRetry.Budget
	}
	if r.Initial <= 0 {
		r.Initial = DefaultTransientRetry.Initial
	}
	if r.Max <= 0 {
		r.Max = DefaultTransientRetry.Max
	}
	return r
}

// Again tells whether try attempt+1 (attempt counts from 0) may start, the
// first try having started at first.
func (r TransientRetry) Again(attempt int, first time.Time) bool {
	return r.Unbounded || attempt+1 < r.Attempts && time.Since(first) < r.Budget
}

// Backoff sleeps before try attempt+1 (attempt counts from 0), or returns
// ctx's error when ctx ends first.
func (r TransientRetry) Backoff(ctx context.Context, attempt int) error {
	ceiling := r.Initial << min(attempt, 20)
	if ceiling > r.Max || ceiling <= 0 {
		ceiling = r.Max
	}
	return Sleep(ctx, rand.N(ceiling)+1)
}

// Sleep waits d, or returns ctx's error when ctx ends first: the one wait
// of every retry and backoff.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Do runs fn, and again after a backoff while it fails with an error
// transient says may pass and r allows another try. It returns fn's last
// error, joined with ctx's when ctx ended while it was retrying.
func (r TransientRetry) Do(ctx context.Context, transient func(error) bool, fn func() error) error {
	r = r.WithDefaults()
	first := time.Now()
	for attempt := 0; ; attempt++ {
		err := fn()
		switch {
		case err == nil || !transient(err):
			return err
		case ctx.Err() != nil:
			return errors.Join(err, ctx.Err())
		case !r.Again(attempt, first):
			return err
		}
		if r.OnRetry != nil {
			r.OnRetry(attempt, err)
		}
		if berr := r.Backoff(ctx, attempt); berr != nil {
			return errors.Join(err, berr)
		}
	}
}

// Transient classifies err with the dialect's rules and tells whether a
// new try may succeed (the database undid the work).
func (e *Engine) Transient(err error) bool {
	return sqlerr.IsTransient(e.Errors.Wrap(err))
}

// RetryRead runs a read (one statement, or a read transaction fn opens
// and ends) again under DefaultTransientRetry while it fails with a
// transient error: a read the database undid (Firebird's "BLOB not found"
// when the record version a read committed statement found is collected
// before its BLOB is fetched; a lost connection) reads again. fn keeps no
// effect outside the try.
func (e *Engine) RetryRead(ctx context.Context, fn func() error) error {
	return DefaultTransientRetry.Do(ctx, e.Transient, fn)
}

// InTx is the core's one transaction helper: it runs fn in a transaction
// of op (the dialect's isolation for it) and commits, and runs the whole
// transaction again under r when fn or the commit fails with a transient
// error. fn may run several times, so it keeps no effect outside the
// transaction. The commit's error is classified (see Exec); fn's is
// returned as fn gave it.
func (e *Engine) InTx(ctx context.Context, op Operation, r TransientRetry, fn func(tx *sql.Tx) error) error {
	return r.Do(ctx, e.Transient, func() error { return e.inTxOnce(ctx, op, fn) })
}

// InWriterTx is InTx holding LockWriter for each try (not over a retry's
// backoff): on an engine that runs one writing transaction at a time
// (SQLite) the transaction queues behind this process's appends and
// advancer writes instead of in the database's busy handler, which sleeps
// up to tens of milliseconds a time. For the core's own short writes only:
// fn must not wait for another holder of LockWriter (an append of this
// process outside tx).
func (e *Engine) InWriterTx(ctx context.Context, op Operation, r TransientRetry, fn func(tx *sql.Tx) error) error {
	return r.Do(ctx, e.Transient, func() error {
		defer e.LockWriter()()
		return e.inTxOnce(ctx, op, fn)
	})
}

func (e *Engine) inTxOnce(ctx context.Context, op Operation, fn func(tx *sql.Tx) error) error {
	tx, err := e.BeginTx(ctx, op)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return e.Errors.Wrap(tx.Commit())
}
