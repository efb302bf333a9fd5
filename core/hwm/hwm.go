// Package hwm advances a topic's high-water mark: the gapless, commit-safe
// end up to which a topic is read. One advancer at a time holds a lease on
// the topic's row, computed on the database clock; the mark never moves
// backwards.
//
// COUNTER_ROW dialects: the mark follows the committed counter, which only
// ever holds committed positions.
//
// SEQUENCE_XID_HORIZON dialects (PostgreSQL): the advancer records the
// sequence's last value as pending_end and, in the same transaction but
// after reading it, takes a transaction id as pending_horizon. Every append
// took its transaction id before drawing a position, so once no transaction
// older than the horizon is in flight, every position up to pending_end is
// committed or rolled back and the mark moves there.
//
// "In flight" is judged per database when the dialect supplies
// xid.oldest_holder (PostgreSQL does): transaction ids are cluster-wide, but
// only a transaction of this database can draw from its sequence, so a
// transaction known to belong to another database of the cluster does not
// hold the mark. Known means positively identified (its backend or prepared
// transaction names another database); a transaction that cannot be placed
// still holds the mark. When that statement is missing or the server
// refuses it (a role denied pg_stat_activity, say), the advancer falls back
// to the cluster-wide horizon for the rest of its life, logs a warning, and
// reports the scope in Holder.Scope and Scope. HolderMetrics shows the oldest transaction holding the mark
// back, its database and since when.
//
// Stopping an advancer (ending Run's or Cycle's context) is not a failure:
// whatever error the driver makes of the interrupted cycle, Metrics.Failed is
// not called and Run returns nil.
package hwm

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// Metrics receives the mark and its lag; plug in OpenTelemetry or anything else.
type Metrics interface {
	// Observe is called after every cycle with the mark and the highest
	// position handed out (lag = end - mark).
	Observe(topic string, mark, end int64)
	// Failed is called when a cycle fails. A cycle interrupted because its
	// context ended (the advancer is stopping) is not reported.
	Failed(topic string, err error)
}

// HolderMetrics is an optional extension of Metrics: when Options.Metrics
// also implements it, every horizon check of a SEQUENCE_XID_HORIZON topic
// reports the oldest transaction holding the mark back (held true), or that
// none does (held false, h carries only the scope).
type HolderMetrics interface {
	Holding(topic string, h Holder, held bool)
}

// Options configure an Advancer.
type Options struct {
	Topic string // default engine.EventStoreTopic
	// PositionTable is the counter table or sequence of the topic (default:
	// the event store's global position).
	PositionTable string
	Owner         string        // lease owner; default a random instance id
	Lease         time.Duration // default 10s
	PollInterval  time.Duration // default 100ms
	Metrics       Metrics
	// Logger receives the advancer's warnings (the horizon falling back to
	// cluster-wide); default slog.Default().
	Logger *slog.Logger
}

// Advancer moves one topic's mark.
type Advancer struct {
	e    *engine.Engine
	opts Options

	mu      sync.Mutex
	mark    int64
	changed chan struct{} // closed and replaced when the mark moves
	nudge   chan struct{}
	lastErr error
	holder  Holder // last horizon check's oldest holder (XID 0: none)
	// clusterWide is set once xid.oldest_holder failed: from then on the
	// horizon is the cluster's (see the package doc).
	clusterWide bool
}

// New returns an advancer for e.
func New(e *engine.Engine, opts Options) *Advancer {
	if opts.Topic == "" {
		opts.Topic = engine.EventStoreTopic
	}
	if opts.PositionTable == "" {
		opts.PositionTable = e.Names.Shared["event_store_global_position_table"]
	}
	if opts.Owner == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		opts.Owner = "tidemark-" + hex.EncodeToString(b)
	}
	if opts.Lease <= 0 {
		opts.Lease = 10 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Advancer{e: e, opts: opts, changed: make(chan struct{}), nudge: make(chan struct{}, 1)}
}

// Owner is the advancer's lease owner id.
func (a *Advancer) Owner() string { return a.opts.Owner }

// Nudge asks the running advancer to cycle now (appenders call it after
// commit). It never blocks.
func (a *Advancer) Nudge() {
	select {
	case a.nudge <- struct{}{}:
	default:
	}
}

// Run cycles until ctx ends, then releases the lease. Ending ctx is how an
// advancer is stopped, so Run then returns nil, also when ctx ended in the
// middle of a cycle; a failing cycle is reported through Metrics.Failed and
// Err, and Run keeps cycling.
func (a *Advancer) Run(ctx context.Context) error {
	defer a.release()
	t := time.NewTicker(a.opts.PollInterval)
	defer t.Stop()
	for {
		for {
			moved, err := a.Cycle(ctx)
			if err != nil || !moved {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-a.nudge:
		}
	}
}

func (a *Advancer) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = a.e.Exec(ctx, a.e.DB, dialect.HWMRelease, nil, map[string]any{"topic": a.opts.Topic, "owner": a.opts.Owner})
}

// Err is the last cycle's error, nil once a cycle succeeds again.
func (a *Advancer) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastErr
}

// Mark is the last mark this advancer saw.
func (a *Advancer) Mark() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mark
}

// Changed returns a channel closed when the mark next moves (in this process).
func (a *Advancer) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

func (a *Advancer) observe(mark int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if mark > a.mark {
		a.mark = mark
		close(a.changed)
		a.changed = make(chan struct{})
	}
}

// Cycle runs one advance attempt. It reports whether the mark moved. A
// cycle without the lease does nothing but refresh the locally known mark.
// A cycle cut short because ctx ended returns ctx's error and is neither
// reported to Metrics.Failed nor kept as Err: it is a stop, not a failure.
func (a *Advancer) Cycle(ctx context.Context) (bool, error) {
	moved, err := a.cycle(ctx)
	if err != nil && ctx.Err() != nil {
		// Drivers word an interrupted cycle in their own ways: "context
		// canceled", a canceled statement (57014), or, on lib/pq,
		// database/sql's "transaction has already been committed or
		// rolled back" once the context closed the transaction under it.
		// Every one of them is the stop, whatever the wording.
		return moved, ctx.Err()
	}
	a.mu.Lock()
	a.lastErr = err
	a.mu.Unlock()
	if err != nil && a.opts.Metrics != nil {
		a.opts.Metrics.Failed(a.opts.Topic, err)
	}
	return moved, err
}

type state struct {
	mark           int64
	pendingEnd     sql.NullInt64
	pendingHorizon sql.NullInt64
	owner          sql.NullString
}

func (a *Advancer) args(extra map[string]any) map[string]any {
	m := map[string]any{"topic": a.opts.Topic, "owner": a.opts.Owner, "lease_millis": a.opts.Lease.Milliseconds()}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// read reads the topic's mark row through the engine's one reader.
func (a *Advancer) read(ctx context.Context, q engine.Querier) (state, error) {
	r, err := a.e.ReadMarkRow(ctx, q, a.opts.Topic)
	if errors.Is(err, sql.ErrNoRows) {
		return state{}, fmt.Errorf("high-water mark row of topic %s is missing", a.opts.Topic)
	}
	return state{mark: r.Mark, pendingEnd: r.PendingEnd, pendingHorizon: r.PendingHorizon, owner: r.Owner}, err
}

// acquire takes or renews the lease in its own short transaction.
func (a *Advancer) acquire(ctx context.Context) (bool, error) {
	res, err := a.e.Exec(ctx, a.e.DB, dialect.HWMAcquire, nil, a.args(nil))
	if err != nil {
		return false, fmt.Errorf("acquiring high-water-mark lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (a *Advancer) cycle(ctx context.Context) (bool, error) {
	// Read first, write only when there is work: an idle topic costs two
	// reads a poll, and on engines that allow one writer at a time (SQLite)
	// the advancer never queues behind an open append for nothing.
	s, err := a.read(ctx, a.e.DB)
	if err != nil {
		return false, err
	}
	a.observe(s.mark)
	end, err := a.committedEnd(ctx, a.e.DB)
	if err != nil {
		return false, err
	}
	if end <= s.mark && !s.pendingEnd.Valid {
		if a.opts.Metrics != nil {
			a.opts.Metrics.Observe(a.opts.Topic, s.mark, s.mark)
		}
		return false, nil
	}
	// The position seam's check: a sequence with a wider cache reports
	// values a session reserved but hands out later: refuse to move (every
	// cycle with work) until fixed.
	if err := a.e.Positions.Check(ctx, a.opts.PositionTable); err != nil {
		return false, err
	}
	held, err := a.acquire(ctx)
	if err != nil || !held {
		return false, err
	}
	if a.e.Positions.EndIsCommitted() {
		return a.cycleCounter(ctx, s, end)
	}
	return a.cycleHorizon(ctx, s)
}

func (a *Advancer) committedEnd(ctx context.Context, q engine.Querier) (int64, error) {
	return a.e.Positions.CommittedEnd(ctx, q, a.opts.PositionTable)
}

// cycleCounter moves the mark to the committed counter read before the
// lease was taken: the counter only ever holds committed positions, so an
// end read at any time is safe to publish.
func (a *Advancer) cycleCounter(ctx context.Context, s state, end int64) (bool, error) {
	moved, err := a.advance(ctx, end)
	if err == nil && a.opts.Metrics != nil {
		mark := s.mark
		if moved {
			mark = end
		}
		a.opts.Metrics.Observe(a.opts.Topic, mark, end)
	}
	return moved, err
}

func (a *Advancer) advance(ctx context.Context, mark int64) (bool, error) {
	res, err := a.e.Exec(ctx, a.e.DB, dialect.HWMAdvance, nil, a.args(map[string]any{"mark": mark}))
	if err != nil {
		return false, fmt.Errorf("advancing high-water mark: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 1 {
		a.observe(mark)
		if a.e.Has(dialect.HWMNotify) {
			_, _ = a.e.Exec(ctx, a.e.DB, dialect.HWMNotify, nil, a.args(nil))
		}
		return true, nil
	}
	return false, nil
}
