package hwm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// The mark row's reads and writes under the lease: the advancer's own, and
// the frontier's through marker. Every write takes the engine's writer lock
// (engine.LockWriter): on SQLite it queues behind this process's appends
// instead of sleeping in the busy handler between them.

type state struct {
	mark           int64
	pendingEnd     sql.NullInt64
	pendingHorizon sql.NullInt64
	owner          sql.NullString
}

// lease is the advancer's lease as the binds of the mark row's writes.
func (a *Advancer) lease() stmt.HWMAcquireParams {
	return stmt.HWMAcquireParams{Topic: a.opts.Topic, Owner: a.opts.Owner, LeaseMillis: a.opts.Lease.Milliseconds()}
}

// read reads the topic's mark row through the engine's one reader.
func (a *Advancer) read(ctx context.Context, q engine.Querier) (state, error) {
	r, err := a.e.ReadMarkRow(ctx, q, a.opts.Topic)
	if errors.Is(err, sql.ErrNoRows) {
		return state{}, fmt.Errorf("high-water mark row of topic %s is missing", a.opts.Topic)
	}
	return state{mark: r.Mark, pendingEnd: r.PendingEnd, pendingHorizon: r.PendingHorizon, owner: r.Owner}, err
}

// leaseRow is the advancer's lease on the mark row, under the rule every
// lease row follows (lease.Row).
func (a *Advancer) leaseRow() lease.Row {
	return lease.Row{E: a.e,
		Take: func(ctx context.Context) (sql.Result, error) { return stmt.ExecHWMAcquire(ctx, a.e, a.e.DB, a.lease()) },
		Drop: func(ctx context.Context) error {
			_, err := stmt.ExecHWMRelease(ctx, a.e, a.e.DB, stmt.HWMReleaseParams{Topic: a.opts.Topic, Owner: a.opts.Owner})
			return err
		}}
}

// acquire takes or renews the lease in its own short transaction.
func (a *Advancer) acquire(ctx context.Context) (bool, error) {
	held, err := a.leaseRow().Held(ctx)
	if err != nil {
		return false, fmt.Errorf("acquiring high-water-mark lease: %w", err)
	}
	return held, nil
}

func (a *Advancer) release() { a.leaseRow().Release() }

// marker is the Advancer as the frontier's position.Marker: the writes of
// the mark row under the lease, keeping what the advancer knows of the row
// (own) true.
type marker Advancer

func (m *marker) Advance(ctx context.Context, mark int64) (bool, error) {
	return (*Advancer)(m).advance(ctx, mark)
}

// SetPending records the pair end/horizon as pending; false when the lease
// lapsed meanwhile.
func (m *marker) SetPending(ctx context.Context, end, horizon int64) (bool, error) {
	a := (*Advancer)(m)
	l := a.lease()
	unlock := a.e.LockWriter()
	res, err := stmt.ExecHWMSetPending(ctx, a.e, a.e.DB, stmt.HWMSetPendingParams{
		PendingEnd: end, PendingHorizon: horizon, Topic: l.Topic, Owner: l.Owner, LeaseMillis: l.LeaseMillis})
	unlock()
	if err != nil {
		a.lost()
		return false, fmt.Errorf("recording pending end: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		a.lost()
		return false, nil
	}
	a.own.pendingEnd = sql.NullInt64{Int64: end, Valid: true}
	a.own.pendingHorizon = sql.NullInt64{Int64: horizon, Valid: true}
	a.ownPending = true
	return true, nil
}

func (m *marker) ClearPending(ctx context.Context) error {
	a := (*Advancer)(m)
	unlock := a.e.LockWriter()
	_, err := stmt.ExecHWMClearPending(ctx, a.e, a.e.DB, stmt.HWMClearPendingParams(a.lease()))
	unlock()
	if err != nil {
		a.lost()
		return err
	}
	a.own.pendingEnd, a.own.pendingHorizon, a.ownPending = sql.NullInt64{}, sql.NullInt64{}, false
	return nil
}

// advance writes the mark and notifies other processes: with
// hwm.advance_notify in one statement, else HWMAdvance and, after it
// committed, HWMNotify.
func (a *Advancer) advance(ctx context.Context, mark int64) (bool, error) {
	folded := a.e.Has(dialect.HWMAdvanceNotify)
	n, err := a.writeMark(ctx, mark, folded)
	if err != nil {
		a.lost()
		return false, err
	}
	if n == 1 {
		// The statement also cleared the pending pair.
		a.own.mark, a.own.pendingEnd, a.own.pendingHorizon = mark, sql.NullInt64{}, sql.NullInt64{}
		a.observe(mark)
		if !folded && a.e.Has(dialect.HWMNotify) {
			_, _ = stmt.ExecHWMNotify(ctx, a.e, a.e.DB, stmt.HWMNotifyParams(a.lease()))
		}
		return true, nil
	}
	// The lease lapsed, or another holder moved the mark at least as far:
	// read the row again next time.
	a.lost()
	return false, nil
}

// writeMark runs the mark's write and returns how many rows it moved (1:
// moved, 0: the lease lapsed or the mark is already there).
func (a *Advancer) writeMark(ctx context.Context, mark int64, folded bool) (int64, error) {
	defer a.e.LockWriter()()
	l := a.lease()
	p := stmt.HWMAdvanceParams{Mark: mark, Topic: l.Topic, Owner: l.Owner, LeaseMillis: l.LeaseMillis}
	if folded {
		// Only the lease holder writes (an acquire through Exec came
		// first), so a read-only engine never gets here.
		_, err := stmt.QueryRowHWMAdvanceNotify(ctx, a.e, a.e.DB, stmt.HWMAdvanceNotifyParams(p))
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("advancing high-water mark: %w", err)
		}
		return 1, nil
	}
	res, err := stmt.ExecHWMAdvance(ctx, a.e, a.e.DB, p)
	if err != nil {
		return 0, fmt.Errorf("advancing high-water mark: %w", err)
	}
	return res.RowsAffected()
}
