package position

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
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

// horizonFrontier runs the end/horizon protocol: the sequence's end, a
// transaction id taken after reading it (the horizon), and the mark moved
// to the end once no transaction older than the horizon is in flight; a
// horizon still waiting is recorded as the mark row's pending pair.
type horizonFrontier struct {
	e    *engine.Engine
	opts FrontierOptions

	mu     sync.Mutex
	holder Holder // last horizon check's oldest holder (XID 0: none)
	// clusterWide is set once xid.oldest_holder failed: from then on the
	// horizon is the cluster's.
	clusterWide bool
}

// horizonRead is what xid.end_horizon returned beside the end: the
// horizon it took (valid: end was past the mark) and whether the
// statement's own snapshot already showed nothing older in flight.
type horizonRead struct {
	valid   bool
	horizon int64
	passed  bool
}

// End is the sequence's end; the lease holder of a dialect with
// xid.end_horizon reads it with the horizon in the same statement (see
// endHorizon).
func (f *horizonFrontier) End(ctx context.Context, holding bool, mark int64) (End, error) {
	if holding && f.e.Has(dialect.EndHorizon) {
		return f.endHorizon(ctx, mark)
	}
	end, err := f.e.Positions.CommittedEnd(ctx, f.e.DB, f.opts.Table)
	return End{Pos: end}, err
}

// Report ignores the end: an end drawn from the sequence says nothing of
// the transactions that drew lower positions.
func (*horizonFrontier) Report(int64) {}

func (f *horizonFrontier) Check(ctx context.Context) error {
	return f.e.Positions.Check(ctx, f.opts.Table)
}

// Next runs the pending-end protocol from the state known before the
// lease was taken (or kept) and the end read at the cycle's start. A
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
func (f *horizonFrontier) Next(ctx context.Context, s Row, end End, m Marker) (Step, error) {
	moved := false
	if s.PendingEnd.Valid && s.PendingHorizon.Valid {
		// A pair recorded by this advancer during its lease belongs to this
		// cluster: the foreign check is for pairs found in the row.
		ok, err := f.horizonPassed(ctx, s.PendingHorizon.Int64, !s.OwnPending)
		if err != nil {
			return Step{}, err
		}
		switch ok {
		case horizonPassed:
			if s.PendingEnd.Int64 > s.Mark {
				if moved, err = m.Advance(ctx, s.PendingEnd.Int64); err != nil || !moved {
					return Step{Lost: true}, err
				}
				s.Mark = s.PendingEnd.Int64
			} else if err := m.ClearPending(ctx); err != nil {
				return Step{}, err
			}
		case horizonWaiting:
			return Step{Mark: s.Mark, Held: true}, nil
		case horizonForeign:
			// The horizon is not below a fresh id: the database moved to
			// another cluster. Discard it and record the end afresh.
			if err := m.ClearPending(ctx); err != nil {
				return Step{}, err
			}
		}
	}
	held := false
	if end.Pos > s.Mark {
		adv, pending, err := f.advanceTo(ctx, end, m)
		if err != nil {
			return Step{Moved: moved}, err
		}
		if adv {
			moved, s.Mark = true, end.Pos
		}
		held = pending
	}
	return Step{Mark: s.Mark, Moved: moved, Held: held}, nil
}

// endHorizon reads the end, takes the horizon when the end is past mark
// and checks it against the statement's snapshot, in one statement. That
// snapshot was taken before the horizon, so its oldest running id is at
// most the horizon and equals it only when every older transaction had
// ended (or, for ids it does not list, was not yet assigned) when it was
// taken: a pass is a pass of the fresh check too. Otherwise the fresh
// check runs as before. The snapshot is cluster-wide (no privileges
// needed): a transaction of another database makes the fresh check run.
func (f *horizonFrontier) endHorizon(ctx context.Context, mark int64) (End, error) {
	r, err := stmt.QueryRowEndHorizon(ctx, f.e, f.e.DB, stmt.EndHorizonParams{Mark: mark, PositionTable: f.opts.Table})
	end, horizon, oldest := r.End, r.XID, r.Oldest
	if err != nil {
		return End{}, fmt.Errorf("reading committed end and horizon of %s: %w", f.opts.Table, err)
	}
	if !horizon.Valid {
		return End{Pos: end}, nil
	}
	return End{Pos: end, horizon: horizonRead{valid: true, horizon: horizon.Int64, passed: oldest.Valid && oldest.Int64 >= horizon.Int64}}, nil
}

// advanceTo takes a transaction id as the horizon of end (read before it)
// unless end carries one, checks it at once (end's pass saves the check),
// and moves the mark to end when it passed, or records the pair as
// pending when it did not. It reports whether the mark moved and whether
// the pair was recorded as pending.
func (f *horizonFrontier) advanceTo(ctx context.Context, end End, m Marker) (moved, pending bool, err error) {
	hr := end.horizon
	horizon := hr.horizon
	if !hr.valid {
		x, err := stmt.QueryRowCurrentXID(ctx, f.e, f.e.DB)
		if err != nil {
			return false, false, fmt.Errorf("taking the horizon transaction id: %w", err)
		}
		horizon = x.XID
	}
	st := horizonPassed
	if hr.valid && hr.passed {
		f.reportHolder(Holder{Scope: f.Scope()}, false)
	} else {
		// The horizon was taken just now on this database: no foreign check.
		if st, err = f.horizonPassed(ctx, horizon, false); err != nil {
			return false, false, err
		}
	}
	if st == horizonPassed {
		moved, err = m.Advance(ctx, end.Pos)
		return moved, false, err
	}
	pending, err = m.SetPending(ctx, end.Pos, horizon)
	return false, pending, err
}

type horizonState int

const (
	horizonWaiting horizonState = iota
	horizonPassed
	horizonForeign
)

// OldestHolder returns the oldest transaction that held the mark back at
// the last horizon check, and false when none did (or no check ran yet).
func (f *horizonFrontier) OldestHolder() (Holder, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holder, f.holder.XID != 0
}

// Scope is the horizon used now: ScopeDatabase when the dialect has
// xid.oldest_holder and the server has not refused it, else ScopeCluster.
func (f *horizonFrontier) Scope() Scope {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clusterWide || !f.e.Has(dialect.OldestHolderXID) {
		return ScopeCluster
	}
	return ScopeDatabase
}

// oldestHolderError marks a failure of xid.oldest_holder itself, the one
// failure that sends the frontier to the cluster-wide horizon.
type oldestHolderError struct{ err error }

func (e *oldestHolderError) Error() string {
	return "reading the oldest transaction of this database: " + e.err.Error()
}
func (e *oldestHolderError) Unwrap() error { return e.err }

// horizonPassed tells whether every transaction older than horizon that
// may have drawn a position of this database ended. xid.oldest_holder
// refused by the server (privileges, a server without the catalog views or
// functions) is not fatal: the cluster-wide check is always safe, only
// slower to pass, so the frontier switches to it for good and says so.
func (f *horizonFrontier) horizonPassed(ctx context.Context, horizon int64, foreignCheck bool) (horizonState, error) {
	scope := f.Scope()
	st, err := f.checkHorizon(ctx, horizon, scope, foreignCheck)
	var ohe *oldestHolderError
	if err != nil && scope == ScopeDatabase && ctx.Err() == nil && errors.As(err, &ohe) && f.refused(ohe.err) {
		f.mu.Lock()
		f.clusterWide = true
		f.mu.Unlock()
		f.opts.Logger.Warn("high-water mark: falling back to the cluster-wide transaction horizon; "+
			"a transaction open in any database of the cluster now holds this mark",
			"topic", f.opts.Topic, "statement", string(dialect.OldestHolderXID), "error", ohe.err)
		st, err = f.checkHorizon(ctx, horizon, ScopeCluster, foreignCheck)
	}
	return st, err
}

// refused tells a refusal of the statement by the server (an SQLSTATE such
// as 42501 insufficient privilege, or 42883 for a missing function) from a
// passing failure (a lost connection, a canceled or deadlocked statement),
// after which the cycle fails as any other and the next one tries again.
func (f *horizonFrontier) refused(err error) bool {
	if sqlerr.Extract(err).SQLState == "" {
		return false
	}
	switch f.e.Errors.Classify(err) {
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
func (f *horizonFrontier) checkHorizon(ctx context.Context, horizon int64, scope Scope, foreignCheck bool) (horizonState, error) {
	h := Holder{Scope: scope}
	if scope == ScopeDatabase {
		r, err := stmt.QueryRowOldestHolderXID(ctx, f.e, f.e.DB)
		if err != nil {
			return 0, &oldestHolderError{err}
		}
		h.XID, h.Database, h.Since = r.XID, r.Database.String, r.Since.Time
	} else {
		r, err := stmt.QueryRowOldestRunningXID(ctx, f.e, f.e.DB)
		if err != nil {
			return 0, fmt.Errorf("reading oldest running transaction: %w", err)
		}
		h.XID = r.XID
	}
	if foreignCheck {
		fresh, err := stmt.QueryRowCurrentXID(ctx, f.e, f.e.DB)
		if err != nil {
			return 0, fmt.Errorf("reading a fresh transaction id: %w", err)
		}
		if horizon >= fresh.XID {
			return horizonForeign, nil
		}
	}
	if h.XID >= horizon {
		f.reportHolder(Holder{Scope: scope}, false)
		return horizonPassed, nil
	}
	f.reportHolder(h, true)
	return horizonWaiting, nil
}

func (f *horizonFrontier) reportHolder(h Holder, held bool) {
	f.mu.Lock()
	if held {
		f.holder = h
	} else {
		f.holder = Holder{}
	}
	f.mu.Unlock()
	if f.opts.OnHolder != nil {
		f.opts.OnHolder(h, held)
	}
}
