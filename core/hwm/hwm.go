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
package hwm

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
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
	// Failed is called when a cycle fails.
	Failed(topic string, err error)
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

// Run cycles until ctx ends, then releases the lease.
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
			return ctx.Err()
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
func (a *Advancer) Cycle(ctx context.Context) (bool, error) {
	moved, err := a.cycle(ctx)
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

func (a *Advancer) positions() map[string]string {
	return map[string]string{"position_table": a.opts.PositionTable}
}

func (a *Advancer) read(ctx context.Context, q engine.Querier) (state, error) {
	var s state
	err := a.e.QueryRow(ctx, q, dialect.HWMRead, nil, a.args(nil)).Scan(&s.mark, &s.pendingEnd, &s.pendingHorizon, &s.owner)
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("high-water mark row of topic %s is missing", a.opts.Topic)
	}
	return s, err
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
	// A sequence with a wider cache reports values a session reserved but
	// hands out later: refuse to move (every cycle with work) until fixed.
	if a.e.Cat.Positions == dialect.SequenceXIDHorizon {
		if err := a.e.CheckSequenceCache(ctx); err != nil {
			return false, err
		}
	}
	held, err := a.acquire(ctx)
	if err != nil || !held {
		return false, err
	}
	if a.e.Cat.Positions == dialect.CounterRow {
		return a.cycleCounter(ctx, s, end)
	}
	return a.cycleHorizon(ctx, s)
}

func (a *Advancer) committedEnd(ctx context.Context, q engine.Querier) (int64, error) {
	var end sql.NullInt64
	if err := a.e.QueryRow(ctx, q, dialect.CommittedEnd, a.positions(), nil).Scan(&end); err != nil {
		return 0, fmt.Errorf("reading committed end of %s: %w", a.opts.PositionTable, err)
	}
	return end.Int64, nil
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

// horizonPassed tells whether every transaction older than horizon ended.
func (a *Advancer) horizonPassed(ctx context.Context, horizon int64) (horizonState, error) {
	tx, err := a.e.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var xmin int64
	if err := a.e.QueryRow(ctx, tx, dialect.OldestRunningXID, nil, nil).Scan(&xmin); err != nil {
		return 0, fmt.Errorf("reading oldest running transaction: %w", err)
	}
	var fresh int64
	if err := a.e.QueryRow(ctx, tx, dialect.CurrentXID, nil, nil).Scan(&fresh); err != nil {
		return 0, fmt.Errorf("reading a fresh transaction id: %w", err)
	}
	if horizon >= fresh {
		return horizonForeign, nil
	}
	if xmin >= horizon {
		return horizonPassed, nil
	}
	return horizonWaiting, nil
}

// recordPending reads the sequence's last value and then, in the same
// transaction, takes a transaction id as the horizon, and records both.
// It returns the horizon, or 0 when nothing was recorded.
func (a *Advancer) recordPending(ctx context.Context, mark int64) (end, horizon int64, err error) {
	tx, err := a.e.DB.BeginTx(ctx, nil)
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
