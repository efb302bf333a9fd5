package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// errRowChanged: an operator changed or deleted the row being retried;
// its apply rolled back and the next poll reads the row again.
var errRowChanged = errors.New("undelivered row changed meanwhile")

// retryHeads applies, before any new message, the heads that are due —
// FAILED with next_retry_at at or before now (or NULL), WAITING heads,
// HALTED heads of a consumer that runs again — from
// their copies, in position order per key; keys run on their workers
// concurrently. It returns how many it applied.
func (r *Runner) retryHeads(ctx context.Context, ps *pollState) int {
	r.dmu.Lock()
	byWorker := make([][]keyRef, r.opts.Workers)
	for k, rows := range r.rows {
		if _, mine := ps.leased(k.partition); !mine || r.revoking(k.partition) {
			continue // retried by the partition's owner
		}
		for _, u := range rows {
			if u.Status.Holds() {
				w := WorkerOf(k.key, r.opts.Workers)
				byWorker[w] = append(byWorker[w], k)
				break
			}
		}
	}
	r.dmu.Unlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for _, keys := range byWorker {
		if len(keys) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range keys {
				n := r.retryKey(ctx, ps, k)
				mu.Lock()
				applied += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return applied
}

// head is the key's lowest-position holding row (nil: the key is free).
func (r *Runner) head(k keyRef) *UndeliveredRow {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	for _, u := range r.rows[k] {
		if u.Status.Holds() {
			return u
		}
	}
	return nil
}

func (r *Runner) forget(u *UndeliveredRow) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	k := keyRef{u.Source, u.Partition, u.Key}
	rs := r.rows[k]
	for i, x := range rs {
		if x == u {
			r.rows[k] = append(rs[:i:i], rs[i+1:]...)
			return
		}
	}
}

// retryKey applies the key's due heads one after the other until one is
// not due, fails, or the consumer halts.
func (r *Runner) retryKey(ctx context.Context, ps *pollState, k keyRef) int {
	applied := 0
	for !ps.isHalted() && !r.isStale() {
		h := r.head(k)
		if h == nil {
			return applied
		}
		if r.skipped(h.Source, h.Partition, h.Position, h.Key) {
			if err := r.dropRow(ctx, h); err != nil {
				return applied
			}
			continue
		}
		if !h.Status.Due(h.NextRetryAt, r.opts.Now().UTC()) {
			return applied
		}
		ok, err := r.retryRow(ctx, ps, h)
		switch {
		case err != nil:
			r.opts.Logger.Warn("consumer retry not recorded", "consumer", r.c.Name, "err", err)
			return applied
		case !ok && h.Status.Holds():
			return applied // still holds the key
		case ok:
			applied++
		}
	}
	return applied
}

// dropRow deletes a head whose position is skipped.
func (r *Runner) dropRow(ctx context.Context, h *UndeliveredRow) error {
	err := r.reg.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := r.reg.deleteUndelivered(ctx, tx, h.ID, h.Status); err != nil || !ok {
			return errors.Join(err, errRowChanged)
		}
		return nil
	})
	if err == nil {
		r.forget(h)
		r.logState("undelivered message skipped", "source", h.Source, "partition", h.Partition, "position", h.Position, "key", h.Key)
	}
	return err
}

// retryRow applies a head from its copy: success deletes the row (in the
// apply's transaction when Transactional); failure counts it and, its
// budget spent, applies the error policy. ok reports the apply succeeded;
// h is updated in place on failure.
func (r *Runner) retryRow(ctx context.Context, ps *pollState, h *UndeliveredRow) (ok bool, err error) {
	src := r.bySource[h.Source]
	if src == nil {
		return false, fmt.Errorf("undelivered row %s: source %s is not read by this runner", h.ID, h.Source)
	}
	cp, has, err := r.reg.messageCopy(ctx, h.ID)
	if err != nil {
		return false, err
	}
	var m Message
	if has {
		if m, err = src.Restore(h.Partition, h.Position, h.Key, cp); err != nil {
			return false, err
		}
	}
	gen, _ := ps.leased(h.Partition)
	m.Generation, m.Epoch = gen, r.epoch
	start := time.Now()
	var herr error // the handler's error, not the database's
	apply := func(tx *sql.Tx) error {
		if tx == nil { // outside the database: checked before the apply
			if err := r.checkLease(ctx, nil, h.Partition, gen); err != nil {
				return err
			}
			if err := r.checkEpoch(ctx); err != nil {
				return err
			}
		}
		if has {
			if herr = r.handlers[m.Source](ctx, tx, m); herr != nil {
				return herr
			}
		}
		if tx != nil { // fenced after the handler, as applyInTxOnce
			if err := r.checkLease(ctx, tx, h.Partition, gen); err != nil {
				return err
			}
		}
		var q engine.Querier = r.reg.e.DB
		if tx != nil {
			q = tx
		}
		if ok, err := r.reg.deleteUndelivered(ctx, q, h.ID, h.Status); err != nil || !ok {
			return errors.Join(err, errRowChanged)
		}
		return nil
	}
	err = r.retryTransient(ctx, h.Source, func() error {
		herr = nil
		if !r.opts.Transactional {
			return apply(nil)
		}
		return r.reg.inTx1(ctx, apply)
	})
	switch {
	case err == nil:
		r.forget(h)
		r.opts.Metrics.Applied(r.c, h.Source, time.Since(start))
		r.logState("undelivered message applied", "source", h.Source, "partition", h.Partition, "position", h.Position, "key", h.Key, "after_failures", h.FailureCount)
		return true, nil
	case errors.Is(err, errRowChanged) && herr == nil:
		return false, nil // an operator's change; read again next poll
	case errors.Is(err, ErrStale) && herr == nil:
		_ = r.markStale() // a rebuild (or pause) began: the next poll reads the row
		return false, nil
	case isLeaseLost(err) && herr == nil:
		r.leaseLost(ps, h.Partition, err)
		return false, nil // the partition's new owner retries it
	case herr == nil:
		return false, err
	}
	return false, r.retryFailed(ctx, ps, h, herr)
}

// retryFailed records a head's further failure: count + 1 and its next
// retry, or, its budget spent, the error policy's outcome (writeOutcome),
// in one transaction. A HALTED head retried was resumed: a fresh budget.
func (r *Runner) retryFailed(ctx context.Context, ps *pollState, h *UndeliveredRow, cause error) error {
	count := h.FailureCount
	if h.Status == StatusHalted {
		count = 0
	}
	u, o := r.failed(h.Source, count, cause)
	u.ID, u.Partition, u.Key, u.Position, u.RecordedAt = h.ID, h.Partition, h.Key, h.Position, h.RecordedAt
	halted := false
	err := r.reg.inTx(ctx, func(tx *sql.Tx) error {
		written, ok, err := r.writeOutcome(ctx, tx, &u, o, h, nil)
		halted = ok
		if err == nil && !written {
			return errRowChanged
		}
		return err
	})
	if errors.Is(err, errRowChanged) {
		return nil
	}
	if err != nil {
		return err
	}
	r.settle(ps, u, o, h, halted)
	return nil
}
