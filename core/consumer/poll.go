package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

func transient(err error) bool { return sqlerr.IsTransient(err) }

// poll is one cycle: read the row (state, epoch), reload checkpoints when
// the epoch moved or the consumer just came back, read the undelivered
// rows and skips, retry the heads that are due, read a page of every
// partition up to its mark, deliver it through the worker pool, save.
func (r *Runner) poll(ctx context.Context) (int, bool, error) {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	c, err := r.reg.Get(ctx, r.c.ID)
	if err != nil {
		return 0, false, err
	}
	if c.State != Running {
		if r.c.State != c.State {
			r.logState("consumer not running", "state", c.State, "halt_reason", c.HaltReason)
		}
		r.c, r.loaded = c, false // reload when it runs again
		return 0, false, nil
	}
	r.c = c
	r.refreshLeases()
	if !r.loaded || r.stale || c.Epoch != r.epoch {
		if err := r.load(ctx, c.Epoch); err != nil {
			return 0, false, err
		}
	}
	r.halted, r.failure, r.marks = false, nil, map[string]int64{}
	if err := r.loadDelivery(ctx); err != nil {
		return 0, false, err
	}
	// Applies in flight finish even when ctx ends (graceful stop); their
	// checkpoints are saved below on the same detached context.
	work := context.WithoutCancel(ctx)
	n := r.retryHeads(work)
	var batch []Message
	more := false
	if !r.halted && r.failure == nil && ctx.Err() == nil {
		if batch, more, err = r.read(ctx); err != nil {
			// read put back the partitions it had read: the runner's
			// state stays what the last complete poll left (a stop's
			// flush still saves it).
			if herr := r.missingHistory(work, err); herr != errNotMissing {
				// A halt (or its failure): reload when running again,
				// from the checkpoints and the incomplete-history marks.
				r.loaded = false
				return n, false, herr
			}
			return n, false, err
		}
	}
	n += r.apply(work, batch)
	if err := r.save(work, false); err != nil {
		return n, more, err
	}
	r.reportLag()
	if r.failure != nil || r.halted {
		r.loaded = false
		return n, false, r.failure
	}
	return n, more && !r.stale, nil
}

// load reads the checkpoints: every partition resumes after its own, or
// after its incomplete-history mark when that is higher (a resume past
// missing history goes on after the gap).
func (r *Runner) load(ctx context.Context, epoch int64) error {
	cps, err := r.reg.Checkpoints(ctx, r.c.ID)
	if err != nil {
		return err
	}
	marks, err := r.reg.incompleteMarks(ctx, r.c.ID)
	if err != nil {
		return err
	}
	now := r.opts.Now()
	parts := map[partKey]*partState{}
	for _, cp := range cps {
		k := partKey{cp.Source, cp.Partition}
		parts[k] = &partState{saved: cp.Position, read: max(cp.Position, marks[k]), lastSave: now}
	}
	for _, s := range r.sources {
		for p := range s.Partitions() {
			if parts[partKey{s.Name(), p}] == nil {
				return fmt.Errorf("consumer %s: no checkpoint for %s/%d (unsubscribed while running?)", r.c.label(), s.Name(), p)
			}
		}
	}
	r.mu.Lock()
	r.parts, r.epoch, r.loaded, r.stale = parts, epoch, true, false
	r.mu.Unlock()
	return nil
}

// readMarked reads a page of s and the mark it was read below: the
// source's own (MarkedReader), else the poll's mark.
func readMarked(ctx context.Context, s Source, partition int, after, upto int64, limit int) ([]Message, int64, error) {
	if mr, ok := s.(MarkedReader); ok {
		return mr.ReadMarked(ctx, partition, after, upto, limit)
	}
	msgs, err := s.Read(ctx, partition, after, upto, limit)
	return msgs, upto, err
}

// apply runs the batch through Workers workers; a key always goes to the
// same worker, so its messages are delivered one at a time in position
// order while other keys run concurrently. Once the runner halted the
// consumer, what had not begun is left for after the resume.
func (r *Runner) apply(ctx context.Context, batch []Message) int {
	if len(batch) == 0 {
		return 0
	}
	queues := make([]chan Message, r.opts.Workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for i := range queues {
		queues[i] = make(chan Message, len(batch))
		wg.Add(1)
		go func(q chan Message) {
			defer wg.Done()
			for m := range q {
				if r.isStale() || r.isHalted() {
					r.abort(m)
					continue
				}
				if r.deliver(ctx, m) {
					mu.Lock()
					applied++
					mu.Unlock()
				}
			}
		}(queues[i])
	}
	for _, m := range batch {
		queues[WorkerOf(m.Key, len(queues))] <- m
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	return applied
}

func (r *Runner) isStale() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stale
}

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

func (p *partState) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// before tells whether every earlier position of m's partition in this
// poll completed (ready), or one of them will not (aborted), and returns
// the channel that signals the next change.
func (r *Runner) before(m Message) (ready, aborted bool, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	if r.stale {
		return false, true, st.changed
	}
	for pos := range st.aborted {
		if pos < m.Position {
			return false, true, st.changed
		}
	}
	for pos := range st.pending {
		if pos < m.Position {
			return false, false, st.changed
		}
	}
	return true, false, st.changed
}

// predecessorWait bounds how long a Transactional apply holds its
// transaction open waiting for earlier positions of its partition to
// commit: past it the apply rolls back and waits without a transaction,
// so an earlier apply blocked on a row lock this one holds (two keys
// writing one row) can finish. One second is far above a typical apply
// (milliseconds) and far below the engines' lock timeouts (PostgreSQL
// none, MariaDB 50 s, H2 and HSQLDB several seconds).
const predecessorWait = time.Second

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

var errWaited = errors.New("earlier applies still running")

// target is the checkpoint m's transaction may write: every apply up to it
// committed, counting m as committed (it commits with the checkpoint).
func (r *Runner) target(m Message) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.parts[partKey{m.Source, m.Partition}]
	c := st.read
	for pos := range st.pending {
		if pos != m.Position {
			c = min(c, pos-1)
		}
	}
	return c
}

// fail records a database error that ends the poll (recording a failure
// failed): m stays uncovered by the checkpoint, so it is read again.
func (r *Runner) fail(m Message, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failure == nil {
		r.failure = fmt.Errorf("%s/%d position %d key %q: %w", m.Source, m.Partition, m.Position, m.Key, err)
	}
	return err
}

func (r *Runner) markStale() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stale = true
	return ErrStale
}

// applyOne applies m with work (the handler, or the recording of m as
// undelivered), retrying transient database errors without limit (the
// database undid the attempt). It returns nil once m completed, errDuplicate
// (another poll applied it with its checkpoint: completed), ErrStale or
// errAborted (m aborted in this poll), or work's error with m still
// pending.
func (r *Runner) applyOne(ctx context.Context, m Message, work func(tx *sql.Tx) error) error {
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
		r.leaseLost(m.Partition, err)
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

// save writes every partition's contiguous position that is ahead of its
// checkpoint: at once after applies, over empty stretches at most once per
// EmptySaveInterval of the application clock, or now when all is set (a
// graceful stop).
func (r *Runner) save(ctx context.Context, all bool) error {
	now := r.opts.Now()
	r.mu.Lock()
	type write struct {
		k        partKey
		pos, gen int64
	}
	var writes []write
	for k, st := range r.parts {
		c := st.contiguous()
		gen, mine := r.leasedLocked(k.partition)
		if !mine || c <= st.saved || (!st.dirty && !all && now.Sub(st.lastSave) < r.opts.EmptySaveInterval) {
			continue
		}
		writes = append(writes, write{k, c, gen})
	}
	stale, epoch := r.stale, r.epoch
	r.mu.Unlock()
	if stale {
		return nil
	}
	// In source and partition order: instances of one consumer saving the
	// same rows in one transaction each lock them in the same order, so
	// they never deadlock.
	sort.Slice(writes, func(i, j int) bool {
		a, b := writes[i].k, writes[j].k
		return a.source < b.source || a.source == b.source && a.partition < b.partition
	})
	moved := make([]bool, len(writes))
	if r.member == nil && len(writes) > 1 {
		// One transaction for every write: one commit (one log flush
		// where commits are durable) instead of one per partition.
		err := r.reg.inTx(ctx, func(tx *sql.Tx) error {
			for i, w := range writes {
				var err error
				if moved[i], err = r.reg.Advance(ctx, tx, r.c.ID, w.k.source, w.k.partition, w.pos, epoch); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		for i, w := range writes {
			var err error
			if moved[i], err = r.saveFenced(ctx, w.k, w.pos, epoch, w.gen); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, w := range writes {
		st := r.parts[w.k]
		st.dirty, st.lastSave = false, now
		if moved[i] {
			st.saved = max(st.saved, w.pos)
		}
	}
	return nil
}
