// Package position is the position strategy as a value: how an append gets
// the positions of its rows (the write side) and how the high-water-mark
// advancer finds the next mark it may publish (the Frontier). The dialect
// names the strategy (Catalogue.Positions); Of binds it to an engine, whose
// position seam (engine.Positions) runs the statements of the position
// object itself.
//
// COUNTER_ROW: a one-row counter an append increments and holds locked
// until it commits, so the committed counter only ever holds committed
// positions and is the next mark.
//
// SEQUENCE_XID_HORIZON: a CACHE 1 sequence drawn by the insert, in a
// transaction that took its id first; the next mark is the sequence's end
// once no transaction older than a horizon taken after reading that end is
// in flight.
//
// "In flight" is judged per database when the dialect supplies
// xid.oldest_holder (PostgreSQL does): transaction ids are cluster-wide, but
// only a transaction of this database can draw from its sequence, so a
// transaction known to belong to another database of the cluster does not
// hold the mark. Known means positively identified (its backend or prepared
// transaction names another database); a transaction that cannot be placed
// still holds the mark. When that statement is missing or the server
// refuses it (a role denied pg_stat_activity, say), the frontier falls back
// to the cluster-wide horizon for the rest of its life, logs a warning, and
// reports the scope in Holder.Scope and Frontier.Scope.
package position

import (
	"context"
	"log/slog"
	"slices"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// Strategy is a dialect's position strategy bound to an engine.
type Strategy interface {
	// Name is the catalogue's strategy.
	Name() dialect.PositionStrategy
	// Writer is the write side for the position object obj.
	Writer(obj engine.PositionObject) Writer
	// TopicWriter is the write side for topic's positions in the per-topic
	// position object (engine.ReadModelPositions): its own counter row, or
	// the sequence every topic shares.
	TopicWriter(topic string) Writer
	// Frontier is the advancer's side for the position object in opts.
	Frontier(opts FrontierOptions) Frontier
}

// Of returns the strategy of e's catalogue (Validate refused an unknown
// one; engine.Open did too).
func Of(e *engine.Engine) Strategy {
	if e.Cat.Positions == dialect.SequenceXIDHorizon {
		return horizonStrategy{e: e}
	}
	return counterStrategy{e: e}
}

// Writer is what an append does around its insert.
type Writer interface {
	// Draws tells whether the insert draws the positions and returns them:
	// nothing is reserved, and an append that reads nothing can be one
	// autocommit statement.
	Draws() bool
	// Hold runs lock when appends of this strategy wait for each other from
	// their reservation to their commit (a counter row held locked), so the
	// caller queues its own appends in-process instead of on the database.
	Hold(lock func())
	// ReserveFirst reserves n positions in q's transaction before the
	// append reads anything, where the dialect asks for that
	// (PositionSettings.AllocateFirst: a reader of the records never waits
	// for the counter while its holder waits to insert); otherwise it does
	// nothing and returns an empty reservation. lock, when set, runs right
	// before the positions are taken.
	ReserveFirst(ctx context.Context, q engine.Querier, n int, lock func()) (Reservation, error)
	// Reserve reserves n positions in q's transaction, as late as possible:
	// after every read of the append. It returns r when r already holds
	// them, and an empty reservation when the insert draws them. lock, when
	// set, runs right before the positions are taken.
	Reserve(ctx context.Context, q engine.Querier, n int, r Reservation, lock func()) (Reservation, error)
	// Resize gives back the positions of r past its first n (callers
	// refused after the reservation), in the same transaction: no gap.
	Resize(ctx context.Context, q engine.Querier, r Reservation, n int) (Reservation, error)
	// Committed is the end an append that committed positions may report
	// to the advancer (Frontier.Report), and false when its end does not
	// make lower positions committed.
	Committed(positions []int64) (int64, bool)
}

// Reservation is the positions an append holds before its insert: the n
// positions ending at end. The zero value holds none (the insert draws
// them).
type Reservation struct {
	end int64
	n   int
}

// Held tells whether the reservation holds positions to stamp on rows.
func (r Reservation) Held() bool { return r.n > 0 }

// Position is the position of the i-th row (from 0) of the reservation.
func (r Reservation) Position(i int) int64 { return r.end - int64(r.n) + int64(i) + 1 }

// FrontierOptions say which position object a Frontier follows and where
// it reports.
type FrontierOptions struct {
	Topic string // the mark's topic, for logs
	Table string // the position object's counter table or sequence
	// Logger receives the frontier's warnings (the horizon falling back to
	// cluster-wide).
	Logger *slog.Logger
	// OnHolder, when set, is told the oldest transaction holding the mark
	// back at every horizon check (held true), or that none does.
	OnHolder func(h Holder, held bool)
}

// counterStrategy is COUNTER_ROW.
type counterStrategy struct{ e *engine.Engine }

func (counterStrategy) Name() dialect.PositionStrategy { return dialect.CounterRow }

func (c counterStrategy) Writer(obj engine.PositionObject) Writer {
	return counterWriter{e: c.e, obj: obj}
}

func (c counterStrategy) TopicWriter(topic string) Writer {
	return counterWriter{e: c.e, obj: engine.ReadModelPositions, topic: topic}
}

func (c counterStrategy) Frontier(opts FrontierOptions) Frontier {
	return &counterFrontier{e: c.e, table: opts.Table, reports: c.reportsCommitted(opts.Table)}
}

// reportsCommitted tells whether an append's end is committed for table: a
// one-row counter's is (a per-topic table holds one row per topic).
func (c counterStrategy) reportsCommitted(table string) bool {
	for _, obj := range engine.PositionObjects() {
		if c.e.Names.Shared[obj.Placeholder] == table {
			return !obj.PerTopic
		}
	}
	return false
}

// counterWriter takes positions from the counter row, which it holds
// locked until the append commits.
type counterWriter struct {
	e   *engine.Engine
	obj engine.PositionObject
	// topic names the row of a per-topic object.
	topic string
}

func (w counterWriter) allocate(ctx context.Context, q engine.Querier, n int) (int64, error) {
	if w.obj.PerTopic {
		return w.e.Positions.AllocateTopic(ctx, q, w.topic, n)
	}
	return w.e.Positions.Allocate(ctx, q, w.e.Names.Shared[w.obj.Placeholder], n)
}

func (counterWriter) Draws() bool { return false }

func (counterWriter) Hold(lock func()) { lock() }

func (w counterWriter) ReserveFirst(ctx context.Context, q engine.Querier, n int, lock func()) (Reservation, error) {
	if !w.e.Cat.PositionSettings.AllocateFirst || n == 0 {
		return Reservation{}, nil
	}
	return w.Reserve(ctx, q, n, Reservation{}, lock)
}

func (w counterWriter) Reserve(ctx context.Context, q engine.Querier, n int, r Reservation, lock func()) (Reservation, error) {
	if r.Held() {
		return r, nil
	}
	if lock != nil {
		lock()
	}
	end, err := w.allocate(ctx, q, n)
	if err != nil {
		return Reservation{}, err
	}
	return Reservation{end: end, n: n}, nil
}

func (w counterWriter) Resize(ctx context.Context, q engine.Querier, r Reservation, n int) (Reservation, error) {
	if n == r.n || !r.Held() {
		return r, nil
	}
	end, err := w.allocate(ctx, q, n-r.n)
	if err != nil {
		return r, err
	}
	return Reservation{end: end, n: n}, nil
}

// Committed: each append holds the counter row locked until it commits or
// rolls back (handing its positions on), so whoever drew a lower position
// was done before the highest one was drawn.
func (w counterWriter) Committed(positions []int64) (int64, bool) {
	if len(positions) == 0 || w.obj.PerTopic {
		return 0, false
	}
	return slices.Max(positions), true
}

// horizonStrategy is SEQUENCE_XID_HORIZON.
type horizonStrategy struct{ e *engine.Engine }

func (horizonStrategy) Name() dialect.PositionStrategy { return dialect.SequenceXIDHorizon }

func (horizonStrategy) Writer(engine.PositionObject) Writer { return drawnWriter{} }

func (horizonStrategy) TopicWriter(string) Writer { return drawnWriter{} }

func (h horizonStrategy) Frontier(opts FrontierOptions) Frontier {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &horizonFrontier{e: h.e, opts: opts}
}

// drawnWriter: the insert draws the positions (after its transaction took
// its id), so nothing is reserved and nothing queues.
type drawnWriter struct{}

func (drawnWriter) Draws() bool { return true }

func (drawnWriter) Hold(func()) {}

func (drawnWriter) ReserveFirst(context.Context, engine.Querier, int, func()) (Reservation, error) {
	return Reservation{}, nil
}

func (drawnWriter) Reserve(context.Context, engine.Querier, int, Reservation, func()) (Reservation, error) {
	return Reservation{}, nil
}

func (drawnWriter) Resize(_ context.Context, _ engine.Querier, r Reservation, _ int) (Reservation, error) {
	return r, nil
}

// Committed: an end drawn from the sequence says nothing of the
// transactions that drew lower positions; the horizon does.
func (drawnWriter) Committed([]int64) (int64, bool) { return 0, false }
