package position

import (
	"context"
	"database/sql"
	"sync/atomic"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// Frontier is what the advancer asks for the next mark of one position
// object. The advancer keeps the lease, the loop and the mark row's writes
// (Marker); the frontier says how far the mark may go. Its methods are
// called by one cycle at a time, except Report.
type Frontier interface {
	// End reads the end a cycle acts on. holding tells that the caller
	// holds the lease and knows the mark row, whose mark is mark.
	End(ctx context.Context, holding bool, mark int64) (End, error)
	// Next moves the mark row from s towards end through m, which the
	// caller holds the lease for.
	Next(ctx context.Context, s Row, end End, m Marker) (Step, error)
	// Report takes the end an append reported after its commit; a
	// frontier for which that end does not make lower positions committed
	// ignores it.
	Report(end int64)
	// Check is the check before the mark moves: a sequence must still be
	// CACHE 1 (*engine.SequenceCacheError otherwise).
	Check(ctx context.Context) error
	// Scope is the horizon the frontier waits on now (ScopeCluster where
	// there is none).
	Scope() Scope
	// OldestHolder is the oldest transaction that held the mark back at the
	// last horizon check, false when none did.
	OldestHolder() (Holder, bool)
}

// End is an end read by Frontier.End.
type End struct {
	// Pos is the highest position handed out (or reported committed).
	Pos     int64
	horizon horizonRead
}

// Row is the mark row as the advancer knows it.
type Row struct {
	Mark           int64
	PendingEnd     sql.NullInt64
	PendingHorizon sql.NullInt64
	// OwnPending: the pending pair was recorded by this advancer during its
	// lease.
	OwnPending bool
}

// Marker writes the mark row under the advancer's lease. A write that
// reports false found the lease lapsed (or the mark already there).
type Marker interface {
	// Advance writes mark (clearing the pending pair) and notifies.
	Advance(ctx context.Context, mark int64) (bool, error)
	// SetPending records end and its horizon as the pending pair.
	SetPending(ctx context.Context, end, horizon int64) (bool, error)
	// ClearPending discards the pending pair.
	ClearPending(ctx context.Context) error
}

// Step is what Next did: the mark it left, whether it moved, whether the
// cycle ended on a write that lost the lease (nothing to observe), and
// whether a transaction still in flight held the mark below the end (the
// advancer then tries again soon, without waiting for a nudge).
type Step struct {
	Mark  int64
	Moved bool
	Lost  bool
	Held  bool
}

// counterFrontier follows the committed counter, which only ever holds
// committed positions: an end read at any time may be published at once.
type counterFrontier struct {
	e       *engine.Engine
	table   string
	reports bool
	// committed is the highest end an append reported since a cycle last
	// took it (0: none).
	committed atomic.Int64
}

// End is, for the lease holder, the end an append reported when it is past
// the mark (a cycle after an append writes the mark without reading the
// counter); otherwise the counter, read. Each reported end is used once.
func (f *counterFrontier) End(ctx context.Context, holding bool, mark int64) (End, error) {
	if c := f.committed.Swap(0); holding && c > mark {
		return End{Pos: c}, nil
	}
	end, err := f.e.Positions.CommittedEnd(ctx, f.e.DB, f.table)
	return End{Pos: end}, err
}

func (f *counterFrontier) Next(ctx context.Context, s Row, end End, m Marker) (Step, error) {
	moved, err := m.Advance(ctx, end.Pos)
	if err != nil {
		return Step{}, err
	}
	if moved {
		s.Mark = end.Pos
	}
	return Step{Mark: s.Mark, Moved: moved}, nil
}

func (f *counterFrontier) Report(end int64) {
	if !f.reports {
		return
	}
	for {
		cur := f.committed.Load()
		if end <= cur || f.committed.CompareAndSwap(cur, end) {
			return
		}
	}
}

func (f *counterFrontier) Check(ctx context.Context) error {
	return f.e.Positions.Check(ctx, f.table)
}

func (*counterFrontier) Scope() Scope { return ScopeCluster }

func (*counterFrontier) OldestHolder() (Holder, bool) { return Holder{}, false }
