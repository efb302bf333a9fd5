package consumer

import (
	"context"
	"time"

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
		halted, err = r.reg.haltIn(ctx, q, r.c.ID, ApplyError)
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
func (r *Runner) settle(u UndeliveredRow, o outcome, h *UndeliveredRow, halted bool) {
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
	r.noteRecorded(u, o, halted)
}
