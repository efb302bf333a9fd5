package hwm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
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

// cycleHorizon runs the pending-end protocol from the state read before the
// lease was taken. A pending pair recorded by any holder is a valid claim
// (every position up to its end was drawn by a transaction older than its
// horizon), so acting on one read a moment earlier is safe.
func (a *Advancer) cycleHorizon(ctx context.Context, s state) (bool, error) {
	moved := false
	if s.pendingEnd.Valid && s.pendingHorizon.Valid {
		ok, err := a.horizonPassed(ctx, s.pendingHorizon.Int64)
		if err != nil {
			return false, err
		}
		switch ok {
		case horizonPassed:
			if s.pendingEnd.Int64 > s.mark {
				if moved, err = a.advance(ctx, s.pendingEnd.Int64); err != nil {
					return false, err
				}
				if moved {
					s.mark = s.pendingEnd.Int64
				}
			} else if _, err := a.e.Exec(ctx, a.e.DB, dialect.HWMClearPending, nil, a.args(nil)); err != nil {
				return false, err
			}
		case horizonWaiting:
			return false, nil
		case horizonForeign:
			// The horizon is not below a fresh id: the database moved to
			// another cluster. Discard it and record the end afresh.
			if _, err := a.e.Exec(ctx, a.e.DB, dialect.HWMClearPending, nil, a.args(nil)); err != nil {
				return false, err
			}
		}
	}
	end, horizon, err := a.recordPending(ctx, s.mark)
	if err != nil {
		return moved, err
	}
	if horizon != 0 {
		// Check at once: with no older transaction in flight the mark moves
		// in this cycle instead of the next poll.
		st, err := a.horizonPassed(ctx, horizon)
		if err != nil {
			return moved, err
		}
		if st == horizonPassed {
			m, err := a.advance(ctx, end)
			if err != nil {
				return moved, err
			}
			if m {
				moved, s.mark = true, end
			}
		}
	}
	if a.opts.Metrics != nil {
		a.opts.Metrics.Observe(a.opts.Topic, s.mark, max(end, s.mark))
	}
	return moved, nil
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
func (a *Advancer) horizonPassed(ctx context.Context, horizon int64) (horizonState, error) {
	scope := a.Scope()
	st, err := a.checkHorizon(ctx, horizon, scope)
	var ohe *oldestHolderError
	if err != nil && scope == ScopeDatabase && ctx.Err() == nil && errors.As(err, &ohe) && a.refused(ohe.err) {
		a.mu.Lock()
		a.clusterWide = true
		a.mu.Unlock()
		a.opts.Logger.Warn("high-water mark: falling back to the cluster-wide transaction horizon; "+
			"a transaction open in any database of the cluster now holds this mark",
			"topic", a.opts.Topic, "statement", string(dialect.OldestHolderXID), "error", ohe.err)
		st, err = a.checkHorizon(ctx, horizon, ScopeCluster)
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

// checkHorizon runs one horizon check in its own transaction: the oldest
// transaction still in flight (per scope), then a fresh id to tell a
// horizon of another cluster.
func (a *Advancer) checkHorizon(ctx context.Context, horizon int64, scope Scope) (horizonState, error) {
	tx, err := a.e.BeginTx(ctx, engine.OpHWM)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	h := Holder{Scope: scope}
	if scope == ScopeDatabase {
		var db sql.NullString
		var since sql.NullTime
		if err := a.e.QueryRow(ctx, tx, dialect.OldestHolderXID, nil, nil).Scan(&h.XID, &db, &since); err != nil {
			return 0, &oldestHolderError{err}
		}
		h.Database, h.Since = db.String, since.Time
	} else if err := a.e.QueryRow(ctx, tx, dialect.OldestRunningXID, nil, nil).Scan(&h.XID); err != nil {
		return 0, fmt.Errorf("reading oldest running transaction: %w", err)
	}
	var fresh int64
	if err := a.e.QueryRow(ctx, tx, dialect.CurrentXID, nil, nil).Scan(&fresh); err != nil {
		return 0, fmt.Errorf("reading a fresh transaction id: %w", err)
	}
	if horizon >= fresh {
		return horizonForeign, nil
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

// recordPending reads the sequence's last value and then, in the same
// transaction, takes a transaction id as the horizon, and records both.
// It returns the horizon, or 0 when nothing was recorded.
func (a *Advancer) recordPending(ctx context.Context, mark int64) (end, horizon int64, err error) {
	tx, err := a.e.BeginTx(ctx, engine.OpHWM)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	// Order matters: the end is read before this transaction has an id.
	if end, err = a.committedEnd(ctx, tx); err != nil {
		return 0, 0, err
	}
	if end <= mark {
		return end, 0, nil
	}
	if err := a.e.QueryRow(ctx, tx, dialect.CurrentXID, nil, nil).Scan(&horizon); err != nil {
		return 0, 0, fmt.Errorf("taking the horizon transaction id: %w", err)
	}
	res, err := a.e.Exec(ctx, tx, dialect.HWMSetPending, nil, a.args(map[string]any{"pending_end": end, "pending_horizon": horizon}))
	if err != nil {
		return 0, 0, fmt.Errorf("recording pending end: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return end, 0, nil // the lease lapsed meanwhile
	}
	return end, horizon, tx.Commit()
}
