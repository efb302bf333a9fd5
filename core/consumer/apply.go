package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// apply runs the batch through Workers workers; a key always goes to the
// same worker, so its messages are delivered one at a time in position
// order while other keys run concurrently. Once the runner halted the
// consumer, what had not begun is left for after the resume.
func (r *Runner) apply(ctx context.Context, ps *pollState, batch []Message) int {
	if len(batch) == 0 {
		return 0
	}
	if r.opts.Transactional && r.opts.TxBatch > 1 {
		return r.applyChunked(ctx, ps, batch)
	}
	// Each worker walks its own list of the batch's indexes in position
	// order (a list per worker, not a channel holding a copy of the batch
	// per worker: a catch-up poll carries thousands of messages).
	lists := make([][]int32, r.opts.Workers)
	for i := range lists {
		lists[i] = make([]int32, 0, len(batch)/len(lists)+1)
	}
	for i, m := range batch {
		w := WorkerOf(m.Key, len(lists))
		lists[w] = append(lists[w], int32(i))
	}
	var wg sync.WaitGroup
	var applied atomic.Int64
	for _, list := range lists {
		if len(list) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range list {
				m := batch[i]
				if r.isStale() || ps.isHalted() {
					r.abort(m)
					continue
				}
				if r.deliver(ctx, ps, m) {
					applied.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(applied.Load())
}

func (r *Runner) isStale() bool { return r.stale.Load() }

// done records m as completed (committed or found already applied).
func (r *Runner) done(m Message, saved int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	delete(st.pending, m.Position)
	st.dirty = true
	st.saved = max(st.saved, saved)
	st.notify()
}

// abort records that m will not complete in this poll.
func (r *Runner) abort(m Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	st.aborted[m.Position] = true
	st.notify()
}

// notify wakes the applies waiting on p's completions, if any: the
// channel is made only when one waits (changed), not per completion.
func (p *partState) notify() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// changedCh is the channel the next notify closes; under r.mu.
func (p *partState) changedCh() <-chan struct{} {
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// before tells whether every earlier position of m's partition in this
// poll completed (ready), or one of them will not (aborted), and, when
// neither, the channel that signals the next change.
func (r *Runner) before(m Message) (ready, aborted bool, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	if r.stale.Load() {
		return false, true, nil
	}
	for pos := range st.aborted {
		if pos < m.Position {
			return false, true, nil
		}
	}
	for pos := range st.pending {
		if pos < m.Position {
			return false, false, st.changedCh()
		}
	}
	return true, false, nil
}

// awaitPredecessors waits until every earlier position of m's partition
// completed (nil), one of them will not (errAborted), bound passes
// (errWaited; bound 0 waits without limit) or ctx ends.
func (r *Runner) awaitPredecessors(ctx context.Context, m Message, bound time.Duration) error {
	var timeout <-chan time.Time
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		timeout = t.C
	}
	for {
		ready, aborted, changed := r.before(m)
		switch {
		case aborted:
			return errAborted
		case ready:
			return nil
		}
		select {
		case <-changed:
		case <-timeout:
			return errWaited
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// target is the checkpoint m's transaction may write: every apply up to it
// committed, counting m as committed (it commits with the checkpoint).
func (r *Runner) target(m Message) int64 { return r.targetOver(m, m) }

// fail records a database error that ends the poll (recording a failure
// failed): m stays uncovered by the checkpoint, so it is read again.
func (r *Runner) fail(ps *pollState, m Message, err error) error {
	ps.fail(fmt.Errorf("%s/%d position %d key %q: %w", m.Source, m.Partition, m.Position, m.Key, err))
	return err
}

func (r *Runner) markStale() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stale.Store(true)
	return ErrStale
}

// applyOne applies m with work (the handler, or the recording of m as
// undelivered), retrying transient database errors without limit (the
// database undid the attempt). It returns nil once m completed, errDuplicate
// (another poll applied it with its checkpoint: completed), ErrStale or
// errAborted (m aborted in this poll), or work's error with m still
// pending.
func (r *Runner) applyOne(ctx context.Context, ps *pollState, m Message, work func(tx *sql.Tx) error) error {
	err := r.retryTransient(ctx, m.Source, func() error {
		if !r.opts.Transactional {
			if err := r.startApply(m); err != nil {
				return err
			}
			if err := r.checkLease(ctx, nil, m.Partition, m.Generation); err != nil {
				return err
			}
			if err := r.checkEpoch(ctx); err != nil {
				return err
			}
			return work(nil)
		}
		return r.applyInTx(ctx, m, work)
	})
	switch {
	case err == nil:
		if !r.opts.Transactional {
			r.done(m, 0)
		}
		return nil
	case errors.Is(err, errDuplicate):
		r.done(m, 0)
		return err
	case errors.Is(err, ErrStale):
		err = r.markStale()
		r.abort(m)
		return err
	case errors.Is(err, errAborted):
		r.abort(m)
		return err
	case isLeaseLost(err):
		// Like a stale apply: rolled back, no budget spent, not retried
		// here; what follows in the partition rolls back behind it.
		r.leaseLost(ps, m.Partition, err)
		r.abort(m)
		return err
	}
	return err
}

// applyInTx runs the handler and the checkpoint write in one transaction,
// committed in position order within the partition: the apply waits for
// every earlier position of the poll to commit, so its checkpoint covers
// it and everything before it. An apply that committed is therefore never
// applied again; one behind an earlier apply that failed rolls back. When
// the write moves nothing, the checkpoint as this transaction reads it
// decides: an epoch above the poll's fences the apply off (rolled back),
// anything else means another poll applied m with its checkpoint (rolled
// back: applied once).
func (r *Runner) applyInTx(ctx context.Context, m Message, work func(tx *sql.Tx) error) error {
	e := r.reg.e
	if e.Cat.Locks.SerializesWriters {
		// One writer at a time (SQLite): holding a transaction while
		// earlier applies wait for the write lock would stall them.
		if err := r.awaitPredecessors(ctx, m, 0); err != nil {
			return err
		}
	}
	for {
		err := r.applyInTxOnce(ctx, m, work)
		if !errors.Is(err, errWaited) {
			return err
		}
		if err := r.awaitPredecessors(ctx, m, 0); err != nil {
			return err
		}
	}
}

func (r *Runner) applyInTxOnce(ctx context.Context, m Message, work func(tx *sql.Tx) error) error {
	e := r.reg.e
	tx, err := e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit
	if err := r.startApply(m); err != nil {
		return err
	}
	if err := work(tx); err != nil {
		return err
	}
	if err := r.awaitPredecessors(ctx, m, predecessorWait); err != nil {
		return err
	}
	// The fence comes after the handler and the wait: the applies of a
	// partition take the ownership row's lock in position order (one that
	// held it while waiting for an earlier one would block it for
	// predecessorWait), and a handler stalled before it holds no lease lock,
	// so a takeover is not held off by it; the handler's writes roll back
	// with a lost fence all the same.
	if err := r.checkLease(ctx, tx, m.Partition, m.Generation); err != nil {
		return err
	}
	target := r.target(m)
	moved, err := r.reg.advanceOver(ctx, tx, r.c.ID, m.Source, m.Partition, target, m.Position, r.epoch)
	if err != nil {
		return err
	}
	if !moved {
		// Never commits: another writer moved the checkpoint to m or past
		// it (m is applied), or a rebuild fenced the poll off. The read
		// only tells which; under a snapshot isolation it may see the row
		// as the transaction began, so it decides nothing else.
		cp, err := r.reg.readCheckpoint(ctx, tx, r.c.ID, m.Source, m.Partition)
		if err != nil {
			return err
		}
		if cp.Epoch > r.epoch {
			return ErrStale
		}
		return errDuplicate
	}
	if err := e.Errors.Wrap(tx.Commit()); err != nil {
		return err
	}
	r.done(m, target)
	return nil
}

// deliver handles one new message: passed over when skipped, recorded
// behind its key when held, applied otherwise, and recorded as undelivered
// when the apply fails. It reports whether the handler applied it.
func (r *Runner) deliver(ctx context.Context, ps *pollState, m Message) bool {
	skip, status, recorded := r.admit(m)
	switch {
	case skip, recorded:
		r.done(m, 0)
		return false
	case status != "":
		r.record(ctx, ps, m, UndeliveredRow{Status: status}, outcome{status: status})
		return false
	}
	start := time.Now()
	m.Epoch = r.epoch
	err := r.applyOne(ctx, ps, m, func(tx *sql.Tx) error { return r.handlers[m.Source](ctx, tx, m) })
	switch {
	case err == nil:
		r.opts.Metrics.Applied(r.c, m.Source, time.Since(start))
		return true
	case errors.Is(err, errDuplicate), errors.Is(err, ErrStale), errors.Is(err, errAborted), isLeaseLost(err):
		return false
	}
	u, o := r.failed(m.Source, 0, err)
	r.record(ctx, ps, m, u, o)
	return false
}

// applyRetry is how an apply retries transient errors: without a bound, so
// a database outage holds the message until the database is back instead
// of spending its delivery budget or halting the consumer; only the
// runner's stop ends it.
var applyRetry = engine.TransientRetry{Unbounded: true}

// retryTransient runs an apply under applyRetry, reporting each transient
// retry to the metrics (no delivery budget is spent on it).
func (r *Runner) retryTransient(ctx context.Context, source string, fn func() error) error {
	retry := applyRetry
	retry.OnRetry = func(attempt int, err error) {
		// Retried without limit, so say so now and then (the 10th, 100th,
		// 1000th… try): an apply that never gets through is visible.
		if n := attempt + 1; n >= 10 && isPowerOf10(n) {
			r.opts.Logger.Warn("consumer apply still failing with a transient error; retrying",
				"consumer_type", r.c.Type, "consumer", r.c.Name, "source", source, "tries", n, "err", err)
		}
	}
	return retry.Do(ctx, r.reg.e.Transient, func() error {
		err := fn()
		if err != nil && sqlerr.IsTransient(err) {
			r.opts.Metrics.Retried(r.c, source, true)
		}
		return err
	})
}

func isPowerOf10(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
