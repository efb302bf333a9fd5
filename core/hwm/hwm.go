// Package hwm advances a topic's high-water mark: the gapless, commit-safe
// end up to which a topic is read. One advancer at a time holds a lease on
// the topic's row, computed on the database clock; the mark never moves
// backwards.
//
// The advancer keeps the lease, the loop, the coalescing of nudges, the
// writes of the mark row and the metrics, and runs one cycle for every
// strategy: it asks the strategy's position.Frontier for the end, and the
// frontier moves the mark towards it through the advancer's writes. On a
// COUNTER_ROW dialect that is the committed counter; on
// SEQUENCE_XID_HORIZON (PostgreSQL) the sequence's end once a transaction
// horizon taken after it passed, judged per database where the dialect can
// (Holder.Scope and Scope say which; HolderMetrics shows the oldest
// transaction holding the mark back). See package position.
//
// Stopping an advancer (ending Run's or Cycle's context) is not a failure:
// whatever error the driver makes of the interrupted cycle, Metrics.Failed is
// not called and Run returns nil.
package hwm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
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

// Scope says which transactions a horizon check waited for.
type Scope = position.Scope

// Scopes of the horizon check.
const (
	// ScopeDatabase: every transaction of the cluster except those known
	// to belong to another database (xid.oldest_holder).
	ScopeDatabase = position.ScopeDatabase
	// ScopeCluster: every transaction of the cluster (xid.oldest_running),
	// because the dialect has no xid.oldest_holder or the server refused it.
	ScopeCluster = position.ScopeCluster
)

// Holder is the oldest transaction holding the mark back: a transaction
// still in flight whose id is below the pending horizon.
type Holder = position.Holder

// HolderMetrics is an optional extension of Metrics: when Options.Metrics
// also implements it, every horizon check of a SEQUENCE_XID_HORIZON topic
// reports the oldest transaction holding the mark back (held true), or that
// none does (held false, h carries only the scope).
type HolderMetrics interface {
	Holding(topic string, h Holder, held bool)
}

// DefaultCoalesce is Options.Coalesce's default floor between cycles.
const DefaultCoalesce = time.Millisecond

// Options configure an Advancer.
type Options struct {
	Topic string // default engine.EventStoreTopic
	// PositionTable is the counter table or sequence of the topic (default:
	// the event store's global position).
	PositionTable string
	Owner         string        // lease owner; default a random instance id
	Lease         time.Duration // default 10s
	PollInterval  time.Duration // default 100ms
	// Coalesce is a floor on the time from the start of one cycle to the
	// next one a nudge starts (default DefaultCoalesce; negative: none).
	// A nudge that finds the advancer idle past the floor starts a cycle
	// at once, and the nudges that arrive while a cycle runs merge into
	// exactly one cycle after it. Without a floor, a steady stream of
	// single appends on PostgreSQL ran a cycle every 2–3 appends (1.97
	// statements per append instead of 1.04); the default floor keeps the
	// statements per append where they were and adds at most that much to
	// the time from commit to readable. Polls and the retries of a held
	// cycle are not delayed by it.
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
	e     *engine.Engine
	opts  Options
	front position.Frontier // the strategy's side: how far the mark may go

	mu      sync.Mutex
	mark    int64
	changed chan struct{} // closed and replaced when the mark moves
	nudge   chan struct{}
	lastErr error

	// cycling makes cycles one at a time: Cycle may be called beside Run
	// (a test's or an operator's forced cycle), and the rest is touched by
	// the goroutine holding it only.
	cycling sync.Mutex
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
	// pace is what the last cycle leaves Run to wait for (a pace); atomic,
	// as Run reads it outside cycling.
	pace atomic.Int32
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
	if opts.Coalesce == 0 {
		opts.Coalesce = DefaultCoalesce
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &Advancer{e: e, opts: opts, changed: make(chan struct{}), nudge: make(chan struct{}, 1)}
	a.front = position.Of(e).Frontier(position.FrontierOptions{
		Topic: opts.Topic, Table: opts.PositionTable, Logger: opts.Logger, OnHolder: a.holding,
	})
	return a
}

// holding passes a horizon check's oldest holder to Options.Metrics when it
// is a HolderMetrics.
func (a *Advancer) holding(h Holder, held bool) {
	if hm, ok := a.opts.Metrics.(HolderMetrics); ok {
		hm.Holding(a.opts.Topic, h, held)
	}
}

// OldestHolder returns the oldest transaction that held the mark back at
// the last horizon check, and false when none did (or no check ran yet).
func (a *Advancer) OldestHolder() (Holder, bool) { return a.front.OldestHolder() }

// Scope is the horizon this advancer uses now: ScopeDatabase when the
// dialect has xid.oldest_holder and the server has not refused it, else
// ScopeCluster.
func (a *Advancer) Scope() Scope { return a.front.Scope() }

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

// NudgeCommitted is Nudge from an append that committed positions up to
// end. Where the strategy makes every position up to such an end committed
// (a one-row counter: each append holds it locked until it commits or
// rolls back), the lease holder's next cycle publishes end without reading
// the counter: a cycle after an append is one statement, the write of the
// mark. Each reported end is used once; a cycle with none reads the end as
// before. Elsewhere (a transaction-id horizon) it is Nudge.
func (a *Advancer) NudgeCommitted(end int64) {
	a.front.Report(end)
	a.Nudge()
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
	a.cycling.Lock()
	defer a.cycling.Unlock()
	moved, err := a.cycle(ctx)
	for try := 1; err != nil && try < cycleTries && ctx.Err() == nil && sqlerr.IsTransient(a.e.Errors.Wrap(err)); try++ {
		// What the failed cycle wrote is not known: read the row again. A
		// stop during the pause is seen by the next cycle.
		a.lost()
		_ = engine.Sleep(ctx, time.Duration(try)*5*time.Millisecond)
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

// cycle is one advance attempt. An idle or caught-up cycle of the lease
// holder is one read (the committed end); another advancer's also reads
// the mark row.
func (a *Advancer) cycle(ctx context.Context) (bool, error) {
	a.pace.Store(int32(paceNudge))
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
	end, err := a.front.End(ctx, holding, s.mark)
	if err != nil {
		return false, err
	}
	if end.Pos <= s.mark && !s.pendingEnd.Valid {
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
			if err == nil {
				a.pace.Store(int32(paceForeign))
			}
			return false, err
		}
		a.renewAt, a.own = sent.Add(a.opts.Lease/3), s
	}
	row := position.Row{Mark: s.mark, PendingEnd: s.pendingEnd, PendingHorizon: s.pendingHorizon, OwnPending: a.ownPending}
	step, err := a.front.Next(ctx, row, end, (*marker)(a))
	if err != nil || step.Lost {
		return step.Moved, err
	}
	if step.Held {
		a.pace.Store(int32(paceHeld))
	}
	if a.opts.Metrics != nil {
		a.opts.Metrics.Observe(a.opts.Topic, step.Mark, max(end.Pos, step.Mark))
	}
	return step.Moved, nil
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
	if err := a.front.Check(ctx); err != nil {
		a.checkedAt = time.Time{}
		return err
	}
	a.checkedAt = time.Now()
	return nil
}
