package consumer

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// outcome is what becomes of a message the runner records: the status of
// its row and what else the row's transaction writes.
type outcome struct {
	status DeliveryStatus
	// nextRetry is when a FAILED row is tried again.
	nextRetry time.Time
	// halt: the consumer halts APPLY_ERROR in the row's transaction.
	halt bool
	// holdKey: the key's WAITING rows become DEAD_LETTER_KEY followers in
	// the row's transaction.
	holdKey bool
	// deadLetter: the message's budget is spent (reported and logged as
	// such).
	deadLetter bool
}

// outcome is what the policy makes of a message whose budget is spent.
func (p ErrorPolicy) outcome() outcome {
	switch p {
	case PolicyDeadLetterKey:
		return outcome{status: StatusDeadLetterKey, holdKey: true, deadLetter: true}
	case PolicyDeadLetter:
		return outcome{status: StatusDeadLetter, deadLetter: true}
	}
	return outcome{status: StatusHalted, halt: true, deadLetter: true}
}

// failurePolicy is a runner's budget and error policy: together they say
// what each failure of a message makes of it.
type failurePolicy struct {
	retry   RetryPolicy
	onError ErrorPolicy
}

// outcome is what a message's n-th failure (n ≥ 1) at now makes of it:
// FAILED with its backoff while the budget lasts, then the error policy's
// outcome.
func (p failurePolicy) outcome(n int, now time.Time) outcome {
	if n < p.retry.MaxAttempts {
		return outcome{status: StatusFailed, nextRetry: now.Add(p.retry.Backoff(n))}
	}
	return p.onError.outcome()
}

// failed is the row and outcome of a message's failure with err after
// count earlier failures (a HALTED head retried after a resume has a
// fresh budget: count 0).
func (r *Runner) failed(source string, count int, err error) (UndeliveredRow, outcome) {
	p := failurePolicy{retry: r.opts.Retry, onError: r.opts.OnError}
	u := UndeliveredRow{Source: source, FailureCount: count + 1, FailureReason: failureReason(err)}
	o := p.outcome(u.FailureCount, r.opts.Now().UTC())
	u.Status, u.NextRetryAt = o.status, o.nextRetry
	if o.status == StatusFailed {
		r.opts.Metrics.Retried(r.c, source, false)
	}
	return u, o
}

// writeOutcome writes row u with outcome o on q, in the caller's
// transaction: inserted with its copy cp when prev is nil (a new message),
// else updated while the row is still as prev was read (false, nil: an
// operator changed it); then the halt and the key's hold o asks for.
// halted: this write halted the consumer. It is the one place a
// failure's consequences are written, for new messages and retries alike.
func (r *Runner) writeOutcome(ctx context.Context, q engine.Querier, u *UndeliveredRow, o outcome, prev *UndeliveredRow, cp *string) (written, halted bool, err error) {
	if prev == nil {
		if err := r.reg.insertUndelivered(ctx, q, r.c.ID, u, cp); err != nil {
			return false, false, err
		}
	} else if ok, err := r.reg.updateUndelivered(ctx, q, *u, prev.Status, prev.FailureCount); err != nil || !ok {
		return false, false, err
	}
	if o.halt {
		halted, err = r.reg.haltIn(ctx, q, r.c.ID, r.c.State, ApplyError)
		if err != nil {
			return false, false, err
		}
	}
	// A new message's row has no WAITING row behind it (a later message of
	// its key comes after it on its worker): only a retry holds any.
	if o.holdKey && prev != nil {
		if err := r.reg.holdKeyDead(ctx, q, r.c.ID, *u); err != nil {
			return false, false, err
		}
	}
	return true, halted, nil
}

// settle updates the runner's view after row u's outcome o committed (h:
// the retried head, nil for a new message) and reports it.
func (r *Runner) settle(ps *pollState, u UndeliveredRow, o outcome, h *UndeliveredRow, halted bool) {
	if h == nil {
		r.remember(u)
	} else {
		r.dmu.Lock()
		*h = u
		if o.holdKey {
			for _, f := range r.rows[keyRef{u.Source, u.Partition, u.Key}] {
				if f.Status == StatusWaiting {
					f.Status = StatusDeadLetterKey
				}
			}
		}
		r.dmu.Unlock()
	}
	r.noteRecorded(ps, u, o, halted)
}

// record writes m's row (status and failure from u) with its copy and
// outcome o (writeOutcome); in a Transactional runner in a transaction
// that also advances the checkpoint over m, in position order. A failure
// to record is a database error that ends the poll.
func (r *Runner) record(ctx context.Context, ps *pollState, m Message, u UndeliveredRow, o outcome) {
	u.Source, u.Partition, u.Key, u.Position, u.RecordedAt = m.Source, m.Partition, m.Key, m.Position, r.opts.Now().UTC()
	var cp *string
	if c, err := r.bySource[m.Source].Copy(m); err != nil {
		r.abort(m)
		_ = r.fail(ps, m, err)
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
		err = r.applyOne(ctx, ps, m, write)
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
		r.leaseLost(ps, m.Partition, err)
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
		_ = r.fail(ps, m, err)
		return
	}
	r.settle(ps, u, o, nil, halted)
}

// noteRecorded logs and reports a row's new status (its outcome o).
func (r *Runner) noteRecorded(ps *pollState, u UndeliveredRow, o outcome, halted bool) {
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
		r.setHalted(ps, ApplyError, "source", u.Source, "partition", u.Partition, "position", u.Position, "key", u.Key)
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
