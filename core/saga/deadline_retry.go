package saga

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// The default delays before a deadline whose handler failed is tried
// again (WithRetryDelay): the first, doubled at each failure in a row up
// to the maximum.
const (
	DefaultRetryFirst = time.Second
	DefaultRetryMax   = 10 * time.Minute
)

// maxTracked bounds how many failing deadlines a deliverer counts the
// failures of; past it the counts start again (and so do the delays).
const maxTracked = 4096

// WithRetryDelay sets how long a deadline whose delivery failed with an
// error that is not transient waits before it is tried again: first after
// the first failure, doubled at each failure in a row, at most max
// (defaults DefaultRetryFirst, DefaultRetryMax). The wait is written as
// the deadline's due_at, the database clock plus the delay, so the
// deadlines already due are delivered first. The spec's SAGA_DEADLINES has
// no attempts column: the failures are counted by this process, and
// start again from first after a restart or a takeover of the lease.
func WithRetryDelay(first, max time.Duration) DeadlineOption {
	return func(o *deadlineOptions) { o.retryFirst, o.retryMax = first, max }
}

// DeliveryError reports a deadline whose delivery failed and was rolled
// back. RetryIn is how long after the database clock's now it is due
// again (0: it stays due, its error being transient).
type DeliveryError struct {
	Deadline Deadline
	// Attempt counts this process's failed deliveries of it in a row.
	Attempt int
	RetryIn time.Duration
	Err     error
}

func (e *DeliveryError) Error() string {
	d := e.Deadline
	retry := "still due"
	if e.RetryIn > 0 {
		retry = fmt.Sprintf("due again in %s", e.RetryIn)
	}
	return fmt.Sprintf("deadline %s (%s %s %q), failed delivery %d, %s: %v", d.ID, d.SagaType, d.SagaID, d.Name, e.Attempt, retry, e.Err)
}

// Unwrap returns the delivery's error.
func (e *DeliveryError) Unwrap() error { return e.Err }

// failed handles a delivery of dl that failed with err (its transaction
// rolled back): unless err is transient, dl's due_at is pushed to the
// database clock plus the next delay, in a statement of its own. The
// failure is logged at warn; the result is a *DeliveryError (joined with
// the push's error when the push failed too).
func (d *Deadlines) failed(ctx context.Context, dl Deadline, err error) error {
	if len(d.failures) >= maxTracked {
		clear(d.failures)
	}
	d.failures[dl.ID]++
	de := &DeliveryError{Deadline: dl, Attempt: d.failures[dl.ID], Err: err}
	if ctx.Err() != nil || sqlerr.IsTransient(err) {
		return de
	}
	de.RetryIn = d.retryDelay(de.Attempt)
	_, perr := stmt.ExecSagaDeadlineRetry(ctx, d.e, d.e.DB, stmt.SagaDeadlineRetryParams{ID: dl.ID, DueMillis: de.RetryIn.Milliseconds()})
	if perr != nil {
		de.RetryIn = 0
		perr = fmt.Errorf("saga deadlines: deferring deadline %s: %w", dl.ID, perr)
	}
	d.opts.logger.Warn("saga deadlines: delivery failed", "owner", d.opts.owner, "saga_type", dl.SagaType, "saga_id", dl.SagaID,
		"deadline", dl.Name, "id", dl.ID, "attempt", de.Attempt, "retry_in", de.RetryIn, "err", err)
	return errors.Join(de, perr)
}

// retryDelay is the delay after the attempt-th failure in a row: the
// first delay doubled attempt-1 times, at most the maximum.
func (d *Deadlines) retryDelay(attempt int) time.Duration {
	delay := d.opts.retryFirst
	for i := 1; i < attempt && delay < d.opts.retryMax; i++ {
		delay *= 2
	}
	return min(delay, d.opts.retryMax)
}

// undelivered is err without its *DeliveryErrors (nil when only those):
// Poll logged them.
func undelivered(err error) error {
	var rest []error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if _, ok := err.(*DeliveryError); !ok && err != nil {
			rest = append(rest, err)
		}
	}
	walk(err)
	return errors.Join(rest...)
}
