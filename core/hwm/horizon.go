package hwm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// Scope says which transactions a horizon check waited for.
type Scope string

// Scopes of the horizon check.
const (
	// ScopeDatabase: every transaction of the cluster except those known
	// to belong to another database (xid.oldest_holder).
	ScopeDatabase Scope = "database"
	// ScopeCluster: every transaction of the cluster (xid.oldest_running),
	// because the dialect has no xid.oldest_holder or the server refused it.
	ScopeCluster Scope = "cluster"
)

// Holder is the oldest transaction holding the mark back: a transaction
// still in flight whose id is below the pending horizon.
type Holder struct {
	XID      int64     // its transaction id (the engine's 64-bit form)
	Database string    // its database; "" when the server does not say
	Since    time.Time // when it began (or was prepared); zero when unknown
	Scope    Scope     // the horizon check that found it
}

// cycleHorizon runs the pending-end protocol from the state known before
// the lease was taken (or kept) and the end read at the cycle's start. A
// pending pair recorded by any holder is a valid claim (every position up
// to its end was drawn by a transaction older than its horizon), so acting
// on one read a moment earlier is safe.
//
// The end was read before the horizon is taken here, which is the order
// the claim needs; the horizon is then checked at once and, when no older
// transaction is in flight, the mark moves with one write and nothing is
// recorded. Only a horizon still waiting is recorded as the pending pair,
// for a later cycle or another holder. In steady state with work that is
// four statements (end, horizon, check, advance) and the notification;
// with xid.end_horizon and hwm.advance_notify (PostgreSQL) three, or two
// when the end's own statement already saw the horizon pass.
func (a *Advancer) cycleHorizon(ctx context.Context, s state, end int64, hr horizonRead) (bool, error) {
	moved := false
	if s.pendingEnd.Valid && s.pendingHorizon.Valid {
		// A pair recorded by this advancer during its lease belongs to this
		// cluster: the foreign check is for pairs found in the row.
		ok, err := a.horizonPassed(ctx, s.pendingHorizon.Int64, !a.ownPending)
		if err != nil {
			return false, err
		}
		switch ok {
		case horizonPassed:
			if s.pendingEnd.Int64 > s.mark {
				if moved, err = a.advance(ctx, s.pendingEnd.Int64); err != nil || !moved {
					return false, err
				}
				s.mark = s.pendingEnd.Int64
			} else if err := a.clearPending(ctx); err != nil {
				return false, err
			}
		case horizonWaiting:
			if a.opts.Metrics != nil {
				a.opts.Metrics.Observe(a.opts.Topic, s.mark, max(end, s.mark))
			}
			return false, nil
		case horizonForeign:
			// The horizon is not below a fresh id: the database moved to
			// another cluster. Discard it and record the end afresh.
			if err := a.clearPending(ctx); err != nil {
				return false, err
			}
		}
	}
	if end > s.mark {
		m, err := a.advanceTo(ctx, end, hr)
		if err != nil {
			return moved, err
		}
		if m {
			moved, s.mark = true, end
		}
	}
	if a.opts.Metrics != nil {
		a.opts.Metrics.Observe(a.opts.Topic, s.mark, max(end, s.mark))
	}
	return moved, nil
}

// horizonRead is what xid.end_horizon returned beside the end: the
// horizon it took (valid: end was past the mark) and whether the
// statement's own snapshot already showed nothing older in flight.
type horizonRead struct {
	valid   bool
	horizon int64
	passed  bool
}

// endHorizon reads the end, takes the horizon when the end is past mark
// and checks it against the statement's snapshot, in one statement. That
// snapshot was taken before the horizon, so its oldest running id is at
// most the horizon and equals it only when every older transaction had
// ended (or, for ids it does not list, was not yet assigned) when it was
// taken: a pass is a pass of the fresh check too. Otherwise the fresh
// check runs as before. The snapshot is cluster-wide (no privileges
// needed): a transaction of another database makes the fresh check run.
func (a *Advancer) endHorizon(ctx context.Context, mark int64) (int64, horizonRead, error) {
	var end int64
	var horizon, oldest sql.NullInt64
	err := a.e.QueryRow(ctx, a.e.DB, dialect.EndHorizon, map[string]string{"position_table": a.opts.PositionTable},
		map[string]any{"mark": mark}).Scan(&end, &horizon, &oldest)
	if err != nil {
		return 0, horizonRead{}, fmt.Errorf("reading committed end and horizon of %s: %w", a.opts.PositionTable, err)
	}
	if !horizon.Valid {
		return end, horizonRead{}, nil
	}
	return end, horizonRead{valid: true, horizon: horizon.Int64, passed: oldest.Valid && oldest.Int64 >= horizon.Int64}, nil
}

// advanceTo takes a transaction id as the horizon of end (read before it)
// unless hr carries one, checks it at once (hr's pass saves the check), and
// moves the mark to end when it passed, or records the pair as pending
// when it did not.
func (a *Advancer) advanceTo(ctx context.Context, end int64, hr horizonRead) (bool, error) {
	horizon := hr.horizon
	if !hr.valid {
		if err := a.e.QueryRow(ctx, a.e.DB, dialect.CurrentXID, nil, nil).Scan(&horizon); err != nil {
			return false, fmt.Errorf("taking the horizon transaction id: %w", err)
		}
	}
	st := horizonPassed
	if hr.valid && hr.passed {
		a.reportHolder(Holder{Scope: a.Scope()}, false)
	} else {
		// The horizon was taken just now on this database: no foreign check.
		var err error
		if st, err = a.horizonPassed(ctx, horizon, false); err != nil {
			return false, err
		}
	}
	if st == horizonPassed {
		return a.advance(ctx, end)
	}
	res, err := a.e.Exec(ctx, a.e.DB, dialect.HWMSetPending, nil, a.args(map[string]any{"pending_end": end, "pending_horizon": horizon}))
	if err != nil {
		a.lost()
		return false, fmt.Errorf("recording pending end: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		a.lost() // the lease lapsed meanwhile
		return false, nil
	}
	a.own.pendingEnd = sql.NullInt64{Int64: end, Valid: true}
	a.own.pendingHorizon = sql.NullInt64{Int64: horizon, Valid: true}
	a.ownPending = true
	return false, nil
}

func (a *Advancer) clearPending(ctx context.Context) error {
	if _, err := a.e.Exec(ctx, a.e.DB, dialect.HWMClearPending, nil, a.args(nil)); err != nil {
		a.lost()
		return err
	}
	a.own.pendingEnd, a.own.pendingHorizon, a.ownPending = sql.NullInt64{}, sql.NullInt64{}, false
	return nil
}

type horizonState int

const (
	horizonWaiting horizonState = iota
	horizonPassed
	horizonForeign
)

// OldestHolder returns the oldest transaction that held the mark back at
// the last horizon check, and false when none did (or no check ran yet).
func (a *Advancer) OldestHolder() (Holder, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.holder, a.holder.XID != 0
}

// Scope is the horizon this advancer uses now: ScopeDatabase when the
// dialect has xid.oldest_holder and the server has not refused it, else
// ScopeCluster.
func (a *Advancer) Scope() Scope {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clusterWide || !a.e.Has(dialect.OldestHolderXID) {
		return ScopeCluster
	}
	return ScopeDatabase
}

// oldestHolderError marks a failure of xid.oldest_holder itself, the one
// failure that sends the advancer to the cluster-wide horizon.
type oldestHolderError struct{ err error }

func (e *oldestHolderError) Error() string {
	return "reading the oldest transaction of this database: " + e.err.Error()
}
func (e *oldestHolderError) Unwrap() error { return e.err }

// horizonPassed tells whether every transaction older than horizon that
// may have drawn a position of this database ended. xid.oldest_holder
// refused by the server (privileges, a server without the catalog views or
// functions) is not fatal: the cluster-wide check is always safe, only
// slower to pass, so the advancer switches to it for good and says so.
func (a *Advancer) horizonPassed(ctx context.Context, horizon int64, foreignCheck bool) (horizonState, error) {
	scope := a.Scope()
	st, err := a.checkHorizon(ctx, horizon, scope, foreignCheck)
	var ohe *oldestHolderError
	if err != nil && scope == ScopeDatabase && ctx.Err() == nil && errors.As(err, &ohe) && a.refused(ohe.err) {
		a.mu.Lock()
		a.clusterWide = true
		a.mu.Unlock()
		a.opts.Logger.Warn("high-water mark: falling back to the cluster-wide transaction horizon; "+
			"a transaction open in any database of the cluster now holds this mark",
			"topic", a.opts.Topic, "statement", string(dialect.OldestHolderXID), "error", ohe.err)
		st, err = a.checkHorizon(ctx, horizon, ScopeCluster, foreignCheck)
	}
	return st, err
}

// refused tells a refusal of the statement by the server (an SQLSTATE such
// as 42501 insufficient privilege, or 42883 for a missing function) from a
// passing failure (a lost connection, a canceled or deadlocked statement),
// after which the cycle fails as any other and the next one tries again.
func (a *Advancer) refused(err error) bool {
	if sqlerr.Extract(err).SQLState == "" {
		return false
	}
	switch a.e.Errors.Classify(err) {
	case dialect.ErrConnectionLost, dialect.ErrQueryCanceled, dialect.ErrDeadlock,
		dialect.ErrSerializationFailure, dialect.ErrLockTimeout:
		return false
	}
	return true
}

// checkHorizon runs one horizon check: the oldest transaction still in
// flight (per scope), then, when foreignCheck is set, a fresh id to tell a
// horizon of another cluster. Each is a statement of its own (autocommit):
// neither needs the other's snapshot, and a transaction around them would
// cost two more round trips.
func (a *Advancer) checkHorizon(ctx context.Context, horizon int64, scope Scope, foreignCheck bool) (horizonState, error) {
	h := Holder{Scope: scope}
	if scope == ScopeDatabase {
		var db sql.NullString
		var since sql.NullTime
		if err := a.e.QueryRow(ctx, a.e.DB, dialect.OldestHolderXID, nil, nil).Scan(&h.XID, &db, &since); err != nil {
			return 0, &oldestHolderError{err}
		}
		h.Database, h.Since = db.String, since.Time
	} else if err := a.e.QueryRow(ctx, a.e.DB, dialect.OldestRunningXID, nil, nil).Scan(&h.XID); err != nil {
		return 0, fmt.Errorf("reading oldest running transaction: %w", err)
	}
	if foreignCheck {
		var fresh int64
		if err := a.e.QueryRow(ctx, a.e.DB, dialect.CurrentXID, nil, nil).Scan(&fresh); err != nil {
			return 0, fmt.Errorf("reading a fresh transaction id: %w", err)
		}
		if horizon >= fresh {
			return horizonForeign, nil
		}
	}
	if h.XID >= horizon {
		a.reportHolder(Holder{Scope: scope}, false)
		return horizonPassed, nil
	}
	a.reportHolder(h, true)
	return horizonWaiting, nil
}

func (a *Advancer) reportHolder(h Holder, held bool) {
	a.mu.Lock()
	if held {
		a.holder = h
	} else {
		a.holder = Holder{}
	}
	a.mu.Unlock()
	if hm, ok := a.opts.Metrics.(HolderMetrics); ok {
		hm.Holding(a.opts.Topic, h, held)
	}
}
