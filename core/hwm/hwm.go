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
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
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
	// Coalesce is the least time from the start of one cycle to the next
	// one a nudge starts (default 10ms; negative: none). Appends nudge the
	// advancer after every commit: within the window their nudges merge
	// into the one cycle queued behind it, so a cycle's few statements are
	// shared by every append of the window instead of repeated per append
	// (at 1 writer on PostgreSQL, ~3,000 appends/s, a 10ms window keeps the
	// advancer under 0.2 statements per append). It adds at most that much
	// to the time from commit to readable; polls are not delayed by it.
	Coalesce time.Duration
	// CheckInterval is how often the position seam's check (the sequence
	// cache on PostgreSQL) runs again after the first cycle with work
	// (default 1m). A failed check is run again by every cycle with work,
	// which refuses to move the mark until it passes.
	CheckInterval time.Duration
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
	// committed is the highest end an append reported with
	// NudgeCommitted since a cycle last took it (0: none).
	committed atomic.Int64
	lastErr   error
	holder    Holder // last horizon check's oldest holder (XID 0: none)
	// clusterWide is set once xid.oldest_holder failed: from then on the
	// horizon is the cluster's (see the package doc).
	clusterWide bool

	// The rest is touched by the cycling goroutine only (Cycle is not
	// called concurrently).
	//
	// While this advancer holds the lease, nobody else writes the mark
	// row, so what it last read and wrote (own) is the row: a cycle then
	// reads only the committed end. That holds until renewAt, a third of
	// the lease after the acquire was sent (by the local clock, well inside
	// the lease the database counts from later); the next cycle with work
	// after it reads the row again and renews the lease, so a row changed
	// behind the holder's back (a database restored under it) is seen
	// within a third of the lease.
	renewAt    time.Time
	own        state
	ownPending bool      // own's pending pair was recorded by this advancer
	checkedAt  time.Time // last passed position check; zero: none yet
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
	if opts.Coalesce == 0 {
		opts.Coalesce = 10 * time.Millisecond
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = time.Minute
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
//
// Nudges coalesce: one cycle runs at a time, one more is queued however
// many appends nudge meanwhile, and a nudged cycle starts no sooner than
// Options.Coalesce after the previous one started.
func (a *Advancer) Run(ctx context.Context) error {
	defer a.release()
	t := time.NewTicker(a.opts.PollInterval)
	defer t.Stop()
	var failing error // the first error of the current run of failures
	failures := 0
	for {
		started := time.Now()
		_, err := a.Cycle(ctx)
		failing, failures = a.logCycle(ctx, err, failing, failures)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-a.nudge:
			if wait := time.Until(started.Add(a.opts.Coalesce)); wait > 0 {
				w := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					w.Stop()
					return nil
				case <-w.C:
				}
			}
		}
	}
}

// logCycle logs the first failure of a run of failed cycles and the
// recovery after it, never every cycle (a cycle runs every PollInterval),
// and returns the run's first error and length.
func (a *Advancer) logCycle(ctx context.Context, err, failing error, failures int) (error, int) {
	switch {
	case err != nil && ctx.Err() != nil:
		return failing, failures // stopping, not failing
	case err != nil:
		if failing == nil {
			a.opts.Logger.Warn("tidemark: the high-water-mark advancer's cycle failed; it retries every poll interval, logging again when it recovers",
				"table", a.opts.PositionTable, "err", err)
			return err, 1
		}
		return failing, failures + 1
	case failing != nil:
		a.opts.Logger.Info("tidemark: the high-water-mark advancer recovered",
			"table", a.opts.PositionTable, "failed_cycles", failures, "first_err", failing)
	}
	return nil, 0
}

// NudgeCommitted is Nudge from an append that committed positions up to
// end. On the event store's counter row (Positions.EndIsCommitted) every
// position up to end is then committed: each append holds the counter row
// locked until it commits or rolls back (handing its positions on), so
// whoever drew a lower position was done before end was drawn. The lease
// holder's next cycle then publishes end without reading the counter: a
// cycle after an append is one statement, the write of the mark. Each
// reported end is used once; a cycle with none reads the counter as
// before. Elsewhere (a transaction-id horizon, another topic) it is Nudge.
func (a *Advancer) NudgeCommitted(end int64) {
	if a.e.Positions.EndIsCommitted() && a.opts.PositionTable == a.e.Names.Shared[engine.EventStorePositions.Placeholder] {
		for {
			cur := a.committed.Load()
			if end <= cur || a.committed.CompareAndSwap(cur, end) {
				break
			}
		}
	}
	a.Nudge()
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
//
// A transient error (sqlerr.IsTransient: a deadlock, a Galera certification
// failure on the mark row, a lock timeout, a lost connection) is retried
// within the cycle, up to cycleTries times with a short pause, before it
// counts as a failure.
func (a *Advancer) Cycle(ctx context.Context) (bool, error) {
	moved, err := a.cycle(ctx)
	for try := 1; err != nil && try < cycleTries && ctx.Err() == nil && sqlerr.IsTransient(a.e.Errors.Wrap(err)); try++ {
		a.lost() // what the failed cycle wrote is not known: read the row again
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(try) * 5 * time.Millisecond):
		}
		moved, err = a.cycle(ctx)
	}
	if err != nil {
		a.lost()
	}
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

// cycleTries bounds the tries of one cycle that meets transient errors:
// on a 3-node Galera cluster written through every node the lease's
// acquire failed certification about one time in three; a cycle that still
// fails after 5 tries is reported, and the next poll tries again.
const cycleTries = 5

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

// cycle is one advance attempt. An idle or caught-up cycle of the lease
// holder is one read (the committed end); another advancer's also reads
// the mark row.
func (a *Advancer) cycle(ctx context.Context) (bool, error) {
	holding := time.Now().Before(a.renewAt)
	s := a.own
	if !holding {
		// Read first, write only when there is work: an idle topic costs
		// two reads a poll, and on engines that allow one writer at a time
		// (SQLite) the advancer never queues behind an open append for
		// nothing.
		var err error
		if s, err = a.read(ctx, a.e.DB); err != nil {
			return false, err
		}
		a.observe(s.mark)
		a.ownPending = false
	}
	end, hr, err := a.end(ctx, holding, s.mark)
	if err != nil {
		return false, err
	}
	if end <= s.mark && !s.pendingEnd.Valid {
		if a.opts.Metrics != nil {
			a.opts.Metrics.Observe(a.opts.Topic, s.mark, s.mark)
		}
		return false, nil
	}
	if err := a.checkPositions(ctx); err != nil {
		return false, err
	}
	if !holding {
		sent := time.Now()
		held, err := a.acquire(ctx)
		if err != nil || !held {
			a.lost()
			return false, err
		}
		a.renewAt, a.own = sent.Add(a.opts.Lease/3), s
	}
	if a.e.Positions.EndIsCommitted() {
		return a.cycleCounter(ctx, s, end)
	}
	return a.cycleHorizon(ctx, s, end, hr)
}

// lost forgets the lease: the next cycle reads the mark row again.
func (a *Advancer) lost() {
	a.renewAt, a.ownPending = time.Time{}, false
}

// checkPositions runs the position seam's check (a sequence with a wider
// cache reports values a session reserved but hands out later) at the
// first cycle with work and then every CheckInterval; once it failed, at
// every cycle with work until it passes, and the mark does not move
// meanwhile.
func (a *Advancer) checkPositions(ctx context.Context) error {
	if !a.checkedAt.IsZero() && time.Since(a.checkedAt) < a.opts.CheckInterval {
		return nil
	}
	if err := a.e.Positions.Check(ctx, a.opts.PositionTable); err != nil {
		a.checkedAt = time.Time{}
		return err
	}
	a.checkedAt = time.Now()
	return nil
}

// end is the end a cycle publishes: for the lease holder, the end an
// append reported (NudgeCommitted) when it is past the mark; otherwise the
// committed end, read. The lease holder of a dialect with xid.end_horizon
// reads it with the horizon in the same statement (see endHorizon).
func (a *Advancer) end(ctx context.Context, holding bool, mark int64) (int64, horizonRead, error) {
	if c := a.committed.Swap(0); holding && c > mark {
		return c, horizonRead{}, nil
	}
	if holding && !a.e.Positions.EndIsCommitted() && a.e.Has(dialect.EndHorizon) {
		return a.endHorizon(ctx, mark)
	}
	end, err := a.committedEnd(ctx, a.e.DB)
	return end, horizonRead{}, err
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
			_, _ = a.e.Exec(ctx, a.e.DB, dialect.HWMNotify, nil, a.args(nil))
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
	args := a.args(map[string]any{"mark": mark})
	if folded {
		// Only the lease holder writes (an acquire through Exec came
		// first), so a read-only engine never gets here.
		var notified sql.NullString
		err := a.e.QueryRow(ctx, a.e.DB, dialect.HWMAdvanceNotify, nil, args).Scan(&notified)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("advancing high-water mark: %w", err)
		}
		return 1, nil
	}
	res, err := a.e.Exec(ctx, a.e.DB, dialect.HWMAdvance, nil, args)
	if err != nil {
		return 0, fmt.Errorf("advancing high-water mark: %w", err)
	}
	return res.RowsAffected()
}
