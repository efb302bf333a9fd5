package consumer

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// keyRef is a key within a source's partition: what an undelivered row
// holds.
type keyRef struct {
	source    string
	partition int
	key       string
}

func refOf(m Message) keyRef { return keyRef{m.Source, m.Partition, m.Key} }

// loadDelivery reads the consumer's undelivered rows and, once per source,
// its skips; skips every partition has passed are deleted.
func (r *Runner) loadDelivery(ctx context.Context) error {
	all, err := r.reg.UndeliveredRows(ctx, r.c.ID)
	if err != nil {
		return err
	}
	rows := map[keyRef][]*UndeliveredRow{}
	for i := range all {
		u := &all[i]
		k := keyRef{u.Source, u.Partition, u.Key}
		rows[k] = append(rows[k], u) // in position order: UndeliveredRows sorts
	}
	skips := map[string][]Skip{}
	for _, s := range r.sources {
		sk, err := r.reg.skips(ctx, r.reg.e.DB, r.c.ID, s.Name(), 0)
		if err != nil {
			return err
		}
		skips[s.Name()] = sk
		if err := r.cleanSkips(ctx, s, sk, all); err != nil {
			return err
		}
	}
	r.dmu.Lock()
	r.rows, r.skips = rows, skips
	r.dmu.Unlock()
	return nil
}

// cleanSkips deletes the skips of s at or below the lowest checkpoint of
// its partitions (every partition that can meet them has passed them) at
// whose position no undelivered row lies. The lowest checkpoint is
// conservative for a topic whose partitions have positions of their own.
func (r *Runner) cleanSkips(ctx context.Context, s Source, sk []Skip, rows []UndeliveredRow) error {
	through := int64(-1)
	r.mu.Lock()
	for p := range s.Partitions() {
		st := r.parts[partKey{s.Name(), p}]
		if through < 0 || st.saved < through {
			through = st.saved
		}
	}
	r.mu.Unlock()
	busy := map[int64]bool{}
	for _, u := range rows {
		if u.Source == s.Name() {
			busy[u.Position] = true
		}
	}
	passed := false
	for _, k := range sk {
		passed = passed || (k.Position <= through && !busy[k.Position])
	}
	if !passed {
		return nil
	}
	return r.reg.retryTransient(ctx, func() error {
		_, err := r.reg.e.Exec(ctx, r.reg.e.DB, dialect.SkippedDeletePassed, nil, map[string]any{
			"consumer_id": r.c.ID, "source_name": s.Name(), "through": through})
		return err
	})
}

// skipped tells whether a skip holds for key at (source, partition,
// position).
func (r *Runner) skipped(source string, partition int, position int64, key string) bool {
	s := r.bySource[source]
	r.dmu.Lock()
	defer r.dmu.Unlock()
	for _, k := range r.skips[source] {
		if k.Position == position && (k.EveryKey || k.Key == key) && (k.Partition == partition || s != nil && s.OnePositionSpace()) {
			return true
		}
	}
	return false
}

// holding is the status a new message of m's key is recorded with when an
// earlier row holds the key ("" when none does): DEAD_LETTER_KEY behind a
// DEAD_LETTER_KEY head, WAITING otherwise. recorded: m has a row already
// (recorded before a crash left the checkpoint behind it).
func (r *Runner) holding(m Message) (status DeliveryStatus, recorded bool) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	for _, u := range r.rows[refOf(m)] {
		if u.Position == m.Position {
			return "", true
		}
		if u.Position < m.Position && u.Status.Holds() && status == "" {
			status = StatusWaiting
			if u.Status == StatusDeadLetterKey {
				status = StatusDeadLetterKey
			}
		}
	}
	return status, false
}

func (r *Runner) remember(u UndeliveredRow) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	k := keyRef{u.Source, u.Partition, u.Key}
	rs := append(r.rows[k], &u)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Position < rs[j].Position })
	r.rows[k] = rs
}

func (r *Runner) isHalted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.halted
}

func (r *Runner) setHalted(reason HaltReason, args ...any) {
	r.mu.Lock()
	r.halted = true
	r.mu.Unlock()
	r.opts.Metrics.Halted(r.c, reason)
	r.opts.Logger.Warn("consumer halted", append([]any{"consumer_type", r.c.Type, "consumer", r.c.Name, "halt_reason", reason}, args...)...)
}

// deliver handles one new message: passed over when skipped, recorded
// behind its key when held, applied otherwise, and recorded as undelivered
// when the apply fails. It reports whether the handler applied it.
func (r *Runner) deliver(ctx context.Context, m Message) bool {
	if r.skipped(m.Source, m.Partition, m.Position, m.Key) {
		r.done(m, 0)
		return false
	}
	status, recorded := r.holding(m)
	switch {
	case recorded:
		r.done(m, 0)
		return false
	case status != "":
		r.record(ctx, m, UndeliveredRow{Status: status}, outcome{status: status})
		return false
	}
	start := time.Now()
	err := r.applyOne(ctx, m, func(tx *sql.Tx) error { return r.handlers[m.Source](ctx, tx, m) })
	switch {
	case err == nil:
		r.opts.Metrics.Applied(r.c, m.Source, time.Since(start))
		return true
	case errors.Is(err, errDuplicate), errors.Is(err, ErrStale), errors.Is(err, errAborted), isLeaseLost(err):
		return false
	}
	u, o := r.failed(m.Source, 0, err)
	r.record(ctx, m, u, o)
	return false
}

// record writes m's row (status and failure from u) with its copy and
// outcome o (writeOutcome); in a Transactional runner in a transaction
// that also advances the checkpoint over m, in position order. A failure
// to record is a database error that ends the poll.
func (r *Runner) record(ctx context.Context, m Message, u UndeliveredRow, o outcome) {
	u.Source, u.Partition, u.Key, u.Position, u.RecordedAt = m.Source, m.Partition, m.Key, m.Position, r.opts.Now().UTC()
	var cp *string
	if c, err := r.bySource[m.Source].Copy(m); err != nil {
		r.abort(m)
		_ = r.fail(m, err)
		return
	} else {
		cp = &c
	}
	halted := false
	write := func(tx *sql.Tx) (err error) {
		_, halted, err = r.writeOutcome(ctx, tx, &u, o, nil, cp)
		return err
	}
	var err error
	if r.opts.Transactional {
		err = r.applyOne(ctx, m, write)
	} else if err = r.reg.inTx(ctx, func(tx *sql.Tx) error {
		if err := r.checkLease(ctx, tx, m.Partition, m.Generation); err != nil {
			return err
		}
		return write(tx)
	}); err == nil {
		r.done(m, 0)
	}
	switch {
	case err == nil:
	case isLeaseLost(err) && !r.opts.Transactional:
		r.leaseLost(m.Partition, err)
		return
	case errors.Is(err, errDuplicate), errors.Is(err, ErrStale), errors.Is(err, errAborted), isLeaseLost(err):
		return
	case r.recordedElsewhere(err):
		// Another instance recorded m first (uq_consumer_undelivered_messages):
		// its row holds m; the next poll reads it.
		r.done(m, 0)
		return
	default:
		r.abort(m)
		_ = r.fail(m, err)
		return
	}
	r.settle(u, o, nil, halted)
}

// noteRecorded logs and reports a row's new status (its outcome o).
func (r *Runner) noteRecorded(u UndeliveredRow, o outcome, halted bool) {
	args := []any{"consumer_type", r.c.Type, "consumer", r.c.Name, "source", u.Source, "partition", u.Partition,
		"position", u.Position, "key", u.Key, "status", u.Status, "failure_count", u.FailureCount}
	switch u.Status {
	case StatusFailed:
		r.opts.Logger.Info("message failed; retrying later", append(args, "next_retry_at", u.NextRetryAt, "reason", u.FailureReason)...)
	case StatusWaiting:
		r.opts.Logger.Debug("message waits behind its key", args...)
	default:
		if o.deadLetter {
			r.opts.Metrics.DeadLettered(r.c, u.Source, u.Status)
			r.opts.Logger.Warn("message's retry budget spent", append(args, "reason", u.FailureReason)...)
		} else {
			r.opts.Logger.Debug("message held behind its key's dead letter", args...)
		}
	}
	if halted {
		r.setHalted(ApplyError, "source", u.Source, "partition", u.Partition, "position", u.Position, "key", u.Key)
	}
}

// applyRetry is how an apply retries transient errors: without a bound, so
// a database outage holds the message until the database is back instead
// of spending its delivery budget or halting the consumer; only the
// runner's stop ends it.
var applyRetry = engine.TransientRetry{Unbounded: true}

// retryTransient runs an apply under applyRetry, reporting each transient
// retry to the metrics (no delivery budget is spent on it).
func (r *Runner) retryTransient(ctx context.Context, source string, fn func() error) error {
	return applyRetry.Do(ctx, r.reg.e.Transient, func() error {
		err := fn()
		if err != nil && sqlerr.IsTransient(err) {
			r.opts.Metrics.Retried(r.c, source, true)
		}
		return err
	})
}

// reportLag reports every partition's lag behind its source's mark as
// this poll read it.
func (r *Runner) reportLag() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sources {
		mark, ok := r.marks[s.Name()]
		if !ok {
			continue
		}
		for p := range s.Partitions() {
			if _, mine := r.leasedLocked(p); !mine {
				continue // its owner reports it
			}
			if st := r.parts[partKey{s.Name(), p}]; st != nil {
				// What the runner has read and completed, saved or not: an
				// idle partition read up to the mark saves only once per
				// EmptySaveInterval but lags nothing.
				r.opts.Metrics.Lag(r.c, s.Name(), p, max(0, mark-max(st.saved, st.contiguous())))
			}
		}
	}
}

// recordedElsewhere tells whether a row insert failed on the unique
// constraint (engines that tell keys apart only by kind class it as a
// duplicate event id, as Subscribe's inserts do).
func (r *Runner) recordedElsewhere(err error) bool {
	switch r.reg.e.Errors.Classify(err) {
	case dialect.ErrUniqueViolation, dialect.ErrDuplicateEventID:
		return true
	}
	return false
}
